"""The page a test is on now and its picture, each bounded: the agent's current tab, a screenshot (masked)."""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

from preview_qa.agent.guards import masking

if TYPE_CHECKING:
    from browser_use import BrowserSession
    from playwright.async_api import Page

    from preview_qa.agent.browsers.pool import Lease

SHOT_TIMEOUT_S = 5.0
URL_POLL_S = 0.05
BLANK = ("", "about:blank")


async def agent_page(session: BrowserSession | None, lease: Lease) -> Page | None:
    """The Playwright page of the tab browser-use's session is on (the last one when it cannot say); None once the
    browser is gone."""
    if not lease.pooled.connected:
        return None
    pages = lease.context.pages
    if not pages:
        return None
    current = ""
    with contextlib.suppress(Exception):  # no session (none started): its last tab
        assert session is not None
        current = await asyncio.wait_for(_known_url(session, pages), SHOT_TIMEOUT_S)
    return next((p for p in reversed(pages) if p.url == current), pages[-1])


async def _known_url(session: BrowserSession, pages: list[Page]) -> str:
    """The URL of the tab the session is on, once the session knows where it goes. A tab a click opened is switched to
    before its URL reaches the session's records: until then browser-use sees it as '' or about:blank and reads its
    page as an empty DOM (no http page), so the next step's model would see nothing on it; on a busy machine that
    lasts long enough to span the step's start. A tab that is at about:blank (where browser-use sends a tab whose
    navigation it blocked, a popup's too) is where the session is: waiting would only wait out the bound. (A new
    tab's own navigation has committed by then: the step's settling waited for it.)"""
    while (url := await session.get_current_page_url()) in BLANK:
        if url and any(page.url == url for page in pages):
            break
        await asyncio.sleep(URL_POLL_S)
    return url


async def session_screenshot(session: BrowserSession | None) -> bytes | None:
    """browser-use's screenshot of its current tab (masked: agent/guards/masking.py guards its connection), or None."""
    if session is None:
        return None
    try:
        return await asyncio.wait_for(session.take_screenshot(), SHOT_TIMEOUT_S)
    except Exception:
        return None


async def page_screenshot(page: Page, mask: masking.Mask) -> bytes | None:
    """A Playwright page's screenshot, masked, or None."""
    try:
        return await masking.screenshot(page, mask, timeout=SHOT_TIMEOUT_S * 1000)
    except Exception:
        return None
