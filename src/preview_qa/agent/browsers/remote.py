"""A Chromium started elsewhere (a grid, a container, a pod) and reached over its DevTools endpoint (--cdp-url): the
pool connects to it instead of launching one, gives each test a context of its own in it as locally, and never closes
or kills the browser itself: ending the connection disposes of the run's contexts (Playwright makes each with
disposeOnDetach). A browser that stops answering is heard by a ping, and the tests it held error saying so."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable
from typing import TYPE_CHECKING
from urllib.parse import urlsplit, urlunsplit

from preview_qa.agent.browsers.launch import CLOSE_TIMEOUT_S, BrowserStartError, ask

if TYPE_CHECKING:
    from playwright.async_api import Browser, Playwright

PING_EVERY_S = 2.0  # how often a remote browser is asked for its version while the run holds it
PING_TIMEOUT_S = 10.0  # an answer later than this: it stopped answering (a busy 2-core runner answers within 1 s)
LOOPBACK = ("127.0.0.1", "localhost", "0.0.0.0", "[::1]", "::1")


class RemoteBrowserError(BrowserStartError):
    """The remote browser could not be reached or connected to; the message is the tests' reason."""


def shown(url: str) -> str:
    """The endpoint as messages name it: scheme, host and port only (a grid's token in its path or query is no one's)."""
    parts = urlsplit(url)
    host = (parts.hostname or "") + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, host, "", "", ""))


def stopped_answering(url: str) -> str:
    return f"the remote browser at {shown(url)} stopped answering"


def websocket_of(given: str, answered: str) -> str:
    """The browser's WebSocket as /json/version answered it, reached at the host it was asked at: a browser in a
    container answers with its own loopback address, not the one the runner reaches it by."""
    asked, ws = urlsplit(given), urlsplit(answered)
    if ws.hostname not in LOOPBACK or asked.hostname in LOOPBACK:
        return answered
    scheme = "wss" if asked.scheme == "https" else "ws"
    return urlunsplit((scheme, asked.netloc, ws.path, ws.query, ""))


async def devtools_websocket(url: str, timeout_s: float) -> str:
    """The WebSocket of the browser at `url`: itself for ws:// and wss://, else the one its /json/version names."""
    if urlsplit(url).scheme in ("ws", "wss"):
        return url
    import httpx

    version = url.rstrip("/") + "/json/version"
    try:
        async with httpx.AsyncClient(timeout=timeout_s) as client:
            answer = await client.get(version)
            answer.raise_for_status()
            return websocket_of(url, str(json.loads(answer.text)["webSocketDebuggerUrl"]))
    except (httpx.HTTPError, ValueError, KeyError, TypeError) as e:
        raise RemoteBrowserError(
            f"the remote browser at {shown(url)} gave no DevTools endpoint ({type(e).__name__}): check --cdp-url, "
            "e.g. http://HOST:9222 of a Chromium started with --remote-debugging-port=9222, or its ws:// URL"
        ) from None


async def connect_browser(playwright: Playwright, url: str, timeout_s: float) -> tuple[Browser, str, set[str]]:
    """Playwright's connection to the browser at `url`, its WebSocket (where browser-use's sessions connect too), and
    the targets and contexts it had before the run came (not the run's: never counted as left behind)."""
    ws = await devtools_websocket(url, timeout_s)
    try:
        async with asyncio.timeout(timeout_s):
            browser = await playwright.chromium.connect_over_cdp(ws, timeout=timeout_s * 1000)
            answers = await ask(browser.new_browser_cdp_session(), "Target.getTargets", "Target.getBrowserContexts")
    except Exception as e:
        raise RemoteBrowserError(
            f"the remote browser at {shown(url)} could not be connected to within {timeout_s:g} s ({type(e).__name__})"
        ) from None
    before = {str(t["targetId"]) for t in answers[0]["targetInfos"]} | set(answers[1]["browserContextIds"])
    return browser, ws, before


async def watch(browser: Browser, url: str, lost: Callable[[str], None]) -> None:
    """Ask the browser for its version every PING_EVERY_S until it disconnects or fails to answer within
    PING_TIMEOUT_S; then tell `lost` and end the connection, so that what the tests wait for from it fails at once."""
    try:
        while browser.is_connected():
            async with asyncio.timeout(PING_TIMEOUT_S):
                await ask(browser.new_browser_cdp_session(), "Browser.getVersion")
            await asyncio.sleep(PING_EVERY_S)
    except Exception:  # TimeoutError included: either way it is gone for the run
        pass
    lost(stopped_answering(url))
    with contextlib.suppress(Exception):
        await asyncio.wait_for(browser.close(), CLOSE_TIMEOUT_S)
