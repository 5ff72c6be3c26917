"""Text as a person sees it, read on the live page by the rule in agent/page/shown.js: the text checks, each one
Playwright call per frame that waits in the page itself (one row in the trace, not one a poll), what each found, and
why a text no one can see is hidden."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import time
from dataclasses import dataclass, field
from importlib import resources
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from playwright.async_api import Frame, Page

POLL_MS = 100  # between two looks in the page, as Playwright's own expect retries
ANSWER_SLACK_S = 5.0  # past its wait, a frame that has not answered (a dialog holds it) is given up on


@functools.cache
def rule() -> str:
    """The rule's factory, a JavaScript expression: `(rule())()` returns its functions."""
    return resources.files(__package__).joinpath("shown.js").read_text(encoding="utf-8")


def rule_in_world(name: str) -> str:
    """A script that makes the rule's functions `globalThis[name]` in a world of our own, once."""
    return f"globalThis.{name} = globalThis.{name} || ({rule()})();"


@functools.cache
def _check() -> str:
    return f"async (arg) => ({rule()})().check(arg)"


@dataclass(frozen=True)
class Hit:
    """Where a text shows: the line that holds it, the block (or field) the line is in, in how many lines."""

    line: str
    tag: str
    count: int
    frame: Frame


@dataclass
class TextLook:
    """What a text check found when its wait ended: where the text shows (None: nowhere), else why no one can see it
    where it is (None: it is not in the page), and every frame's lines to name the nearest one."""

    hit: Hit | None = None
    why: tuple[str, Frame] | None = None
    lines: list[tuple[Frame, list[str]]] = field(default_factory=list)
    waited_s: float = 0.0


async def look_for_text(page: Page, text: str, wait: float, shown: bool) -> TextLook:
    """Wait until `text` shows in some frame of the page (`shown`) or in none, or `wait` seconds have passed. Every
    frame (same- and cross-origin) is looked at by one call that waits in it; for `shown`, the first frame that shows
    it ends the others' waits."""
    start = time.monotonic()
    tasks = [asyncio.ensure_future(_in_frame(frame, text, wait, shown)) for frame in page.frames]
    look = TextLook()
    try:
        for done in asyncio.as_completed(tasks):
            frame, found = await done
            if found is not None:
                _add(look, frame, found)
            if shown and look.hit is not None:
                break
    finally:
        for task in tasks:
            task.cancel()
    look.waited_s = round(time.monotonic() - start, 2)
    return look


def _add(look: TextLook, frame: Frame, found: dict[str, Any]) -> None:
    hit = found.get("hit")
    if hit and look.hit is None:
        look.hit = Hit(str(hit["text"]), str(hit["tag"]), int(hit["count"]), frame)
    if found.get("why") and look.why is None:
        look.why = (str(found["why"]), frame)
    if found.get("lines"):
        look.lines.append((frame, [str(line) for line in found["lines"]]))


async def _in_frame(frame: Frame, text: str, wait: float, shown: bool) -> tuple[Frame, dict[str, Any] | None]:
    """The check in one frame; None when the frame went away or never answered (it shows nothing then). A document
    replaced while it waited is looked at again, in what is left of the wait."""
    start = time.monotonic()
    while True:
        left = max(0.0, wait - (time.monotonic() - start))
        arg = {"text": text, "shown": shown, "waitMs": left * 1000, "pollMs": POLL_MS}
        try:
            async with asyncio.timeout(left + ANSWER_SLACK_S):
                found: dict[str, Any] = await frame.evaluate(_check(), arg)
                return frame, found
        except TimeoutError:
            return frame, None
        except Exception:  # its document was replaced (a navigation) or the frame detached
            if frame.is_detached() or left <= 0:
                return frame, None
        with contextlib.suppress(Exception):
            await frame.wait_for_load_state("domcontentloaded", timeout=max(1.0, left * 1000))


async def shown_text(page: Page, timeout_s: float = ANSWER_SLACK_S) -> str:
    """The text a person sees on the page's main document, a line a block or field (a field's value included)."""
    async with asyncio.timeout(timeout_s):
        lines: list[str] = await page.main_frame.evaluate(f"() => ({rule()})().lines(document).map((l) => l.text)")
    return "\n".join(lines)


async def why_hidden(page: Page, text: str) -> str | None:
    """Why no one can see `text` on the page's main document (opacity 0, clipped, off the page...); None when it is
    not there at all."""
    with contextlib.suppress(Exception):
        async with asyncio.timeout(ANSWER_SLACK_S):
            why = await page.main_frame.evaluate(f"(text) => ({rule()})().explain(text)", text)
            return str(why) if why else None
    return None
