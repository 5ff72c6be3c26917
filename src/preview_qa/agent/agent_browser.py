"""browser-use's side of the pool, imported the first time a test needs the agent (agent/pool.py, agent/session.py), so
that a run of replays never loads browser-use: the profile an agent's browser is launched with, that launch, and
browser-use's session on one test's context."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from browser_use import BrowserProfile, BrowserSession
from browser_use.config import CONFIG

from preview_qa.agent import browser_use_patches
from preview_qa.agent.browser import (
    BROWSER_ARGS,
    CLOSE_TIMEOUT_S,
    START_TRIES,
    WINDOW,
    BrowserProcesses,
    BrowserSetup,
    BrowserStartError,
    close_browser,
    start_browser,
)
from preview_qa.agent.browser_use_patches import ContextSession

if TYPE_CHECKING:
    from playwright.async_api import Browser, Playwright

    from preview_qa.agent.pool import Lease

LET_GO_TIMEOUT_S = 10.0  # for each step of the launching session letting go of a new browser

browser_use_patches.apply()  # before any browser-use session of this process starts
gc.freeze()  # browser-use's modules live as long as the run: no full collection needs to scan them (agent/browser_agents.py)


def launch_profile(browser: BrowserSetup, workroot: str) -> BrowserProfile:
    """How an agent's browser is launched: browser-use's own flags for Chromium, and ours. Its downloads folder lies
    under the run's folder (browser-use's default is a new folder in /tmp per profile, left behind)."""
    return BrowserProfile(
        executable_path=browser.chromium,
        downloads_path=os.path.join(workroot, "downloads"),
        headless=browser.headless,
        keep_alive=True,  # the browser outlives the session that launched it (see agent/pool.py)
        # Chromium's own sandbox needs user namespaces, which neither root nor a container's seccomp allows.
        chromium_sandbox=os.geteuid() != 0 and not CONFIG.IN_DOCKER,
        enable_default_extensions=False,
        args=BROWSER_ARGS,
        window_size=WINDOW,
    )


@dataclass
class StartedBrowser:
    """One started Chromium: browser-use's session and Playwright's connection, both to the same browser."""

    session: BrowserSession
    playwright_browser: Browser


class BrowserUseLaunch:
    """One try at an agent's browser: browser-use's launch with the profile folder given, then Playwright connected to
    it over CDP."""

    def __init__(self, profile: BrowserProfile, folder: str, playwright: Playwright):
        self.session = BrowserSession(browser_profile=profile.model_copy(update={"user_data_dir": folder}))
        self.processes, self.playwright = BrowserProcesses(folder), playwright

    async def start(self) -> StartedBrowser:
        await self.session.start()
        assert self.session.cdp_url is not None
        return StartedBrowser(self.session, await self.playwright.chromium.connect_over_cdp(self.session.cdp_url))

    def running(self) -> bool:
        return bool(self.processes.find())

    async def abandon(self) -> None:
        await close_browser(self.session, None, self.processes)


async def launch_for_agents(
    profile: BrowserProfile,
    playwright: Playwright,
    gate: asyncio.Semaphore,
    folder: str,
    on_failed_try: Callable[[int, str], None],
) -> tuple[str, Browser]:
    """A browser launched by browser-use under `folder` (in turns, tried twice: agent/browser.py), whose launching
    session then lets go of it: its CDP URL, for each test's own session, and Playwright's connection."""
    started = await start_browser(
        lambda profile_folder: BrowserUseLaunch(profile, profile_folder, playwright), gate, folder, on_failed_try
    )
    cdp_url = str(started.session.cdp_url)  # before letting go: browser-use's reset forgets it
    await _let_go(started)
    return cdp_url, started.playwright_browser


async def _let_go(started: StartedBrowser) -> None:
    """The launching session disconnects (the browser keeps running: its profile keeps it alive) and the blank page it
    opened in the shared default context is closed, which must stay empty (see pool's `_leftovers`)."""
    session = started.session
    # Each step is bounded and none fails the launch: on a busy machine browser-use's reset can outlast its bound (the
    # session is dropped anyway), and a blank page that could not be closed is found after the first test by
    # `_leftovers`, which retires the browser then.
    with contextlib.suppress(Exception):
        await asyncio.wait_for(session.reset(), LET_GO_TIMEOUT_S)
    with contextlib.suppress(Exception):
        await asyncio.wait_for(session.event_bus.stop(timeout=0, clear=True), 1.0)
    for context in started.playwright_browser.contexts:
        for page in list(context.pages):
            with contextlib.suppress(Exception):
                await asyncio.wait_for(page.close(), LET_GO_TIMEOUT_S)


async def start_session(lease: Lease, profile: BrowserProfile) -> ContextSession:
    """browser-use's session for the lease's context, connected. A connection that fails (a DevTools handshake that
    times out on a busy machine) is tried once more; twice, and the browser is retired after the test."""
    problem = ""
    for _ in range(START_TRIES):
        session = ContextSession(browser_profile=profile).in_context(lease.context_id, lease.emulated)
        try:
            await session.start()
            lease.session = session
            return session
        except Exception as e:
            problem = f"{type(e).__name__}: {e}"
            with contextlib.suppress(Exception):
                await asyncio.wait_for(session.kill(), CLOSE_TIMEOUT_S)
    lease.tainted.append("browser-use could not connect to it")
    raise BrowserStartError(f"browser-use could not connect to the browser: {problem} ({START_TRIES} tries)")
