"""A saved login in and out of a test's browser: loaded before its first navigation, read back when the agent is done.

Playwright (attached over CDP to browser-use's Chromium) does both: `set_storage_state` clears the fresh profile and sets
cookies, localStorage and IndexedDB once, as a new context would get them, so a page that logs out stays logged out
(browser-use's own StorageStateWatchdog re-applies localStorage on every page load instead)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from preview_qa.engine.saved_state import BrowserState
from preview_qa.results import error_line

if TYPE_CHECKING:
    from playwright.async_api import BrowserContext

STATE_TIMEOUT_S = 15.0


class StateError(Exception):
    """A saved state could not be loaded into the browser or read from it; the message says which."""


async def load_state(context: BrowserContext, state: BrowserState, hosts: list[str]) -> None:
    """Put `state` into the context's browser. Storage of origins the test may not visit is left out: setting it
    means opening that origin, which the agent's domain guard exists to prevent, and the test could never read it."""
    data = state.as_dict()
    data["origins"] = [o for o in state.origins if urlsplit(str(o.get("origin", ""))).hostname in hosts]
    try:
        await asyncio.wait_for(context.set_storage_state(data), STATE_TIMEOUT_S)  # type: ignore[arg-type]
    except Exception as e:
        raise StateError(f"could not load the saved browser state: {type(e).__name__}: {error_line(e)}") from None


async def read_state(context: BrowserContext) -> BrowserState:
    """The context's cookies and every visited origin's localStorage and IndexedDB (sessionStorage is per tab and
    dies with it, as in Playwright's storage state)."""
    try:
        state = await asyncio.wait_for(context.storage_state(indexed_db=True), STATE_TIMEOUT_S)
    except Exception as e:
        raise StateError(f"could not save the browser state: {type(e).__name__}: {error_line(e)}") from None
    return BrowserState(dict(state))
