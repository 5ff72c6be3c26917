"""What a test left in a pooled browser outside its own context, checked after the test (agent/browsers/pool.py): pages
in the shared default context, or contexts still open. A check that fails names its true cause: a browser that died
says so."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Collection
from typing import TYPE_CHECKING

from preview_qa.agent.browsers.launch import CLOSE_TIMEOUT_S, ask

if TYPE_CHECKING:
    from playwright.async_api import Browser

DIED = "it disconnected or crashed"
DISCONNECT_WAIT_S = 1.0  # for a browser whose check failed to be heard of as disconnected, if that is why it failed


async def _disconnects(browser: Browser, within_s: float = DISCONNECT_WAIT_S) -> bool:
    """Whether the browser is disconnected, or is within `within_s`: a request cut off by its death (TargetClosedError)
    can reach us before the disconnection does, on a busy machine."""
    gone = asyncio.Event()

    def heard(_: Browser) -> None:
        gone.set()

    browser.on("disconnected", heard)
    try:
        if browser.is_connected():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(gone.wait(), within_s)
    finally:
        browser.remove_listener("disconnected", heard)
    return not browser.is_connected()


async def leftovers(browser: Browser, closed: str | None, gone: Collection[str] = (), theirs: Collection[str] = ()) -> list[str]:
    """What a test left in the browser outside its own (closed) context: pages in the shared default context, or
    contexts still open. Either could carry its cookies or storage into the next test. With other tests still in the
    browser, their contexts are theirs: only the closed context `closed` counts as left open. A page of a context in
    `gone` (the tests' own, closed or being closed) is on its way out: Chromium drops a context from its list before its
    pages, so a check beside another test's close saw that test's page in no context, and retired a sound browser.
    `theirs`: a remote browser's targets and contexts from before the run, not the run's to count."""
    try:  # bounded, and never raising: the next tests wait for this check
        async with asyncio.timeout(CLOSE_TIMEOUT_S * 2):
            answers = await ask(browser.new_browser_cdp_session(), "Target.getTargets", "Target.getBrowserContexts")
        targets, contexts = answers[0]["targetInfos"], answers[1]["browserContextIds"]
    except Exception as e:
        if await _disconnects(browser):  # the check failed because the browser died before Playwright had heard of it
            return [DIED]
        return [f"it could not be inspected ({type(e).__name__})"]
    found = []
    kinds = ("page", "iframe", "worker", "service_worker", "shared_worker")
    pages = [t for t in targets if t.get("type") in kinds and t.get("browserContextId") not in gone]
    pages = [t for t in pages if t.get("targetId") not in theirs]  # a remote browser's own, from before the run
    contexts = [c for c in contexts if c not in theirs]
    if closed is not None:
        pages = [t for t in pages if t.get("browserContextId") not in contexts]
        contexts = [c for c in contexts if c == closed]
    if pages:
        found.append(f"{len(pages)} page(s) or worker(s) were left open")
    if contexts:
        found.append(f"{len(contexts)} browser context(s) were left open")
    return found
