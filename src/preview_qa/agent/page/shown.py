"""Text as a person sees it, read on the live page by the rule in agent/page/shown.js: the text checks, each one
Playwright call per frame that waits in the page itself (one row in the trace, not one a poll), what each found, and
why a text no one can see is hidden. Closed shadow roots (a design system's web components), which no script of the
page can reach and Playwright does not pierce, are found over DevTools (`DOM.getDocument` with `pierce`) and read by
the same rule."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import time
from dataclasses import dataclass, field
from importlib import resources
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from playwright.async_api import CDPSession, Frame, Page

POLL_MS = 100  # between two looks in the page, as Playwright's own expect retries
ANSWER_SLACK_S = 5.0  # past its wait, a frame that has not answered (a dialog holds it) is given up on


@functools.cache
def rule() -> str:
    """The rule's factory, a JavaScript expression: `(rule())()` returns its functions (shown.js, given the factory of
    what lies over and behind a text, layers.js)."""
    here = resources.files(__package__)
    shown, layers = (here.joinpath(name).read_text(encoding="utf-8") for name in ("shown.js", "layers.js"))
    return f"(() => ({shown.strip()})({layers.strip()}))"


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


class ClosedRoots:
    """The closed shadow roots of a page, found once (the page has settled when its checks run) and read by the rule
    whenever a check asks; every call is bounded and never raises (a page without them costs one DevTools call)."""

    def __init__(self, page: Page, session: CDPSession | None = None):
        self._page, self._lent = page, session  # a session of the page's that another keeps (None: one of our own)
        self._found: asyncio.Task[tuple[CDPSession, list[str]] | None] | None = None

    async def look(self, text: str, shown: bool) -> dict[str, Any] | None:
        """What the rule's check finds of `text` in the closed roots now, merged (None: there are none)."""
        self._found = self._found or asyncio.ensure_future(self._find())
        found = await self._found
        if found is None:
            return None
        cdp, roots = found
        merged: dict[str, Any] = {"hit": None, "lines": []}
        arg = {"text": text, "shown": shown, "waitMs": 0, "pollMs": POLL_MS}
        for root in roots:
            with contextlib.suppress(Exception):
                async with asyncio.timeout(ANSWER_SLACK_S):
                    answer = await cdp.send(
                        "Runtime.callFunctionOn",
                        {
                            "objectId": root,
                            "functionDeclaration": f"function (arg) {{ return ({rule()})().check(arg, this); }}",
                            "arguments": [{"value": arg}],
                            "returnByValue": True,
                            "awaitPromise": True,
                        },
                    )
                value = answer["result"].get("value") or {}
                merged["hit"] = merged["hit"] or value.get("hit")
                merged["lines"] += value.get("lines") or []
        return merged

    async def _find(self) -> tuple[CDPSession, list[str]] | None:
        with contextlib.suppress(Exception):
            async with asyncio.timeout(ANSWER_SLACK_S):
                cdp = self._lent or await self._page.context.new_cdp_session(self._page)
                tree = await cdp.send("DOM.getDocument", {"depth": -1, "pierce": True})
                closed = [node["backendNodeId"] for node in _closed_roots(tree["root"])]
                roots = [(await cdp.send("DOM.resolveNode", {"backendNodeId": node}))["object"]["objectId"] for node in closed]
                return (cdp, roots) if roots else None
        return None

    async def close(self) -> None:
        if self._lent is None and self._found is not None and self._found.done() and (found := self._found.result()):
            with contextlib.suppress(Exception):
                async with asyncio.timeout(ANSWER_SLACK_S):
                    await found[0].detach()


def _closed_roots(node: dict[str, Any]) -> list[dict[str, Any]]:
    """Every closed shadow root under `node` (a DevTools DOM node), in its frames' documents too, in document order."""
    found, stack = [], [node]
    while stack:
        here = stack.pop()
        roots = here.get("shadowRoots") or []
        found += [root for root in roots if root.get("shadowRootType") == "closed"]
        stack += reversed(
            [*roots, *(here.get("children") or []), *([here["contentDocument"]] if "contentDocument" in here else [])]
        )
    return found


async def look_for_text(page: Page, text: str, wait: float, shown: bool, closed: ClosedRoots | None = None) -> TextLook:
    """Wait until `text` shows in some frame of the page (`shown`) or in none, or `wait` seconds have passed. Every
    frame (same- and cross-origin) is looked at by one call that waits in it; for `shown`, the first frame that shows
    it ends the others' waits. `closed`: the page's closed shadow roots, looked in at the start and, unless the text
    showed, once the waits ended."""
    start = time.monotonic()
    look = TextLook()
    if closed is not None and shown:
        _add_closed(look, page, await closed.look(text, shown))
        if look.hit is not None:
            look.waited_s = round(time.monotonic() - start, 2)
            return look
    tasks = [asyncio.ensure_future(_in_frame(frame, text, wait, shown)) for frame in page.frames]
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
    if closed is not None and look.hit is None:
        _add_closed(look, page, await closed.look(text, shown))
    look.waited_s = round(time.monotonic() - start, 2)
    return look


def _add_closed(look: TextLook, page: Page, found: dict[str, Any] | None) -> None:
    if found is not None:
        _add(look, page.main_frame, found)


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
