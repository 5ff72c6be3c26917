"""The recorded actions a replay can run, one small handler each: on the element the recording names, or on the page.
An action in neither table is one only the agent can run, and the replay drifts there."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

from preview_qa.agent.evidence.action_names import KEYS

if TYPE_CHECKING:
    from playwright.async_api import BrowserContext, ElementHandle, Page

    from preview_qa.agent.replay.recording import RecordedAction, RecordedStep

ACTION_TIMEOUT_MS = 5_000  # for one action on a found element (a select's option to appear, a file to be set)


class Replayer(Protocol):
    """What a handler uses of the player (agent/replay/player.py), which imports this table."""

    context: BrowserContext
    page: Page

    async def click(self, click: Callable[[], Awaitable[None]], later: RecordedStep | None) -> None: ...
    def tab(self, step: RecordedStep, action: RecordedAction) -> Page: ...
    def real_text(self, step: RecordedStep, action: RecordedAction, text: str) -> str: ...


OnElement = Callable[["Replayer", "RecordedStep", "RecordedAction", "ElementHandle", "RecordedStep | None"], Awaitable[None]]
OnPage = Callable[["Replayer", "RecordedStep", "RecordedAction", "RecordedStep | None"], Awaitable[None]]


async def _click(
    r: Replayer, step: RecordedStep, action: RecordedAction, element: ElementHandle, later: RecordedStep | None
) -> None:
    await r.click(lambda: element.click(force=True, timeout=ACTION_TIMEOUT_MS), later)


async def _input(
    r: Replayer, step: RecordedStep, action: RecordedAction, element: ElementHandle, later: RecordedStep | None
) -> None:
    text = r.real_text(step, action, str(action.params.get("text", "")))
    if action.params.get("clear", True):
        await element.fill(text, force=True, timeout=ACTION_TIMEOUT_MS)
    else:  # appended where the field's text ends
        await element.focus()
        await r.page.keyboard.press("End")
        await r.page.keyboard.insert_text(text)


async def _select(
    r: Replayer, step: RecordedStep, action: RecordedAction, element: ElementHandle, later: RecordedStep | None
) -> None:
    text = r.real_text(step, action, str(action.params.get("text", "")))
    try:
        await element.select_option(label=text, force=True, timeout=ACTION_TIMEOUT_MS)
    except Exception:  # browser-use's select takes an option's text or its value
        await element.select_option(value=text, force=True, timeout=ACTION_TIMEOUT_MS)


async def _upload(
    r: Replayer, step: RecordedStep, action: RecordedAction, element: ElementHandle, later: RecordedStep | None
) -> None:
    await element.set_input_files(str(action.params.get("path", "")), timeout=ACTION_TIMEOUT_MS)


async def _scroll_element(
    r: Replayer, step: RecordedStep, action: RecordedAction, element: ElementHandle, later: RecordedStep | None
) -> None:
    await element.evaluate("(el, dy) => el.scrollBy(0, dy * el.clientHeight)", _scrolled(action.params))


async def _click_at(r: Replayer, step: RecordedStep, action: RecordedAction, later: RecordedStep | None) -> None:
    p = action.params
    await r.click(lambda: r.page.mouse.click(p["coordinate_x"], p.get("coordinate_y", 0)), later)


async def _navigate(r: Replayer, step: RecordedStep, action: RecordedAction, later: RecordedStep | None) -> None:
    if action.params.get("new_tab"):
        r.page = await r.context.new_page()
    await r.page.goto(str(action.params.get("url", "")), wait_until="load", timeout=0)  # the test's own timeout bounds it


async def _go_back(r: Replayer, step: RecordedStep, action: RecordedAction, later: RecordedStep | None) -> None:
    await r.page.go_back(timeout=0)


async def _send_keys(r: Replayer, step: RecordedStep, action: RecordedAction, later: RecordedStep | None) -> None:
    keys = "+".join(KEYS.get(k.lower(), k) for k in str(action.params.get("keys", "")).split("+"))
    try:
        await r.page.keyboard.press(keys)
    except Exception:  # not a key nor a shortcut: text, which browser-use types
        await r.page.keyboard.type(str(action.params.get("keys", "")))


async def _switch(r: Replayer, step: RecordedStep, action: RecordedAction, later: RecordedStep | None) -> None:
    tab = r.tab(step, action)
    if action.name == "close":
        await tab.close()
        tab = r.context.pages[-1] if r.context.pages else tab
    r.page = tab
    await tab.bring_to_front()


async def _scroll_page(r: Replayer, step: RecordedStep, action: RecordedAction, later: RecordedStep | None) -> None:
    await r.page.evaluate("(dy) => window.scrollBy(0, dy * window.innerHeight)", _scrolled(action.params))


async def _find_text(r: Replayer, step: RecordedStep, action: RecordedAction, later: RecordedStep | None) -> None:
    with contextlib.suppress(Exception):  # browser-use too goes on when the text is not there
        await r.page.get_by_text(str(action.params.get("text", ""))).first.scroll_into_view_if_needed(timeout=ACTION_TIMEOUT_MS)


async def _wait(r: Replayer, step: RecordedStep, action: RecordedAction, later: RecordedStep | None) -> None:
    await asyncio.sleep(min(max(float(action.params.get("seconds", 3)) - 1, 0), 30))  # browser-use's own reckoning


ON_ELEMENT: dict[str, OnElement] = {
    "click": _click,
    "input": _input,
    "select_dropdown": _select,
    "upload_file": _upload,
    "scroll": _scroll_element,
}
ON_PAGE: dict[str, OnPage] = {
    "navigate": _navigate,
    "go_back": _go_back,
    "send_keys": _send_keys,
    "switch": _switch,
    "close": _switch,
    "scroll": _scroll_page,
    "find_text": _find_text,
    "wait": _wait,
}


def page_action(action: RecordedAction) -> OnPage | None:
    """The handler of an action with no element to act on; a click needs the coordinates it was recorded at."""
    if action.name == "click":
        return _click_at if action.params.get("coordinate_x") is not None else None
    return ON_PAGE.get(action.name)


def _scrolled(params: dict[str, Any]) -> float:
    """How far a recorded scroll goes, in heights of what scrolls: browser-use's `pages`, downwards unless `down` is
    false."""
    pages = float(params.get("pages", params.get("num_pages", 1.0)) or 1.0)
    return pages if params.get("down", True) else -pages
