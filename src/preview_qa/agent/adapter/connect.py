"""browser-use's side of the pool, imported the first time a test needs the agent (agent/session.py), so that a run of
replays never loads browser-use: browser-use's session on one test's context of a pooled browser, and the browser
errors it hears."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING

from browser_use import BrowserProfile
from browser_use.browser.events import BrowserErrorEvent

from preview_qa.agent.adapter import patches
from preview_qa.agent.adapter.context_session import ContextSession, idle_cloud_client
from preview_qa.agent.browsers.launch import CLOSE_TIMEOUT_S, START_TRIES, BrowserStartError

if TYPE_CHECKING:
    from preview_qa.agent.browsers.pool import Lease

# What browser-use's session imports as it first starts (BrowserSession.attach_all_watchdogs)
WATCHDOGS = "captcha default_action dom downloads har_recording local_browser permissions recording screenshot security"
WATCHDOGS += " storage_state"


def prepare_sessions() -> None:
    """What the first session would make on the run's loop as it starts, made as this module is imported (on the
    thread that imports browser-use: agent/session.py): the watchdogs' modules and the idle cloud client (its TLS
    set-up)."""
    for name in WATCHDOGS.split():
        importlib.import_module(f"browser_use.browser.watchdogs.{name}_watchdog")
    idle_cloud_client()


patches.apply()  # before any browser-use session of this process starts
prepare_sessions()
gc.freeze()  # browser-use's modules live as long as the run: no full collection needs to scan them (agent/browser_agents.py)


async def start_session(lease: Lease, profile: BrowserProfile) -> ContextSession:
    """browser-use's session for the lease's context, connected. A connection that fails (a DevTools handshake that
    times out on a busy machine) is tried once more; twice, and the browser is retired after the test."""
    problem = ""
    patches.own_event_buses()  # the test's task: its session's and its agent's buses, not the others'
    for _ in range(START_TRIES):
        session = ContextSession(browser_profile=profile).in_context(lease.context_id)
        try:
            await session.start()
            lease.before_close.append(session.kill)
            return session
        except Exception as e:
            problem = f"{type(e).__name__}: {e}"
            with contextlib.suppress(Exception):
                await asyncio.wait_for(session.kill(), CLOSE_TIMEOUT_S)
    lease.tainted.append("browser-use could not connect to it")
    raise BrowserStartError(f"browser-use could not connect to the browser: {problem} ({START_TRIES} tries)")


def hear_errors(session: ContextSession, heard: Callable[[BrowserErrorEvent], None]) -> None:
    """`heard` is told of each of browser-use's own browser errors in the session."""
    session.event_bus.on(BrowserErrorEvent, heard)
