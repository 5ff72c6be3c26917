"""A recorded element on the live page: which live element it is (the replay's matching, by XPath first), and how the
locator an export writes for it finds it there — how many elements it matches, this one's place among them, and the
nearest landmark or container in which it matches this one alone. The agent and the replay both record these facts
as each action runs, so that an exported test is unique where the run was (export/locators.py)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar, cast

from preview_qa.agent.replay.locators import TEST_ID_ATTRIBUTES, By, Locator, calls, locate, plain_id
from preview_qa.agent.replay.recording import LiveElement, find_element

if TYPE_CHECKING:
    from playwright.async_api import ElementHandle, Frame, JSHandle, Page
    from playwright.async_api import Locator as Found

T = TypeVar("T")
NO_NAMES = "this browser does not tell the elements' accessible names"
LOCATE_TIMEOUT_S = 3.0  # for each look at the page for one element's facts
MOST_SCOPES = 8  # landmarks and containers tried, nearest first

# The rendered elements of one tag in a frame's document and its open shadow roots (browser-use's XPaths pass through
# shadow roots), with what matching reads of each. computedName is Chromium's accessible name (the launch enables it).
_ELEMENTS = """(tag) => {
  const found = [], roots = [document];
  for (let i = 0; i < roots.length; i++) {
    for (const el of roots[i].querySelectorAll("*")) {
      if (el.shadowRoot) roots.push(el.shadowRoot);
      if (el.localName === tag) found.push(el);
    }
  }
  return found;
}"""
# Each element's XPath and, for those at `only` (all when null), what matching reads of it: Chromium computes an
# accessible name or role in about 8 ms an element, so a page of 300 links took 5 s to read whole.
_FACTS = """(elements, only) => elements.map((el) => {
  const segments = [];
  for (let node = el; node && node.nodeType !== Node.DOCUMENT_NODE;) {
    if (node instanceof ShadowRoot) { node = node.host; continue; }
    const tag = node.localName, parent = node.parentNode;
    const same = parent ? Array.from(parent.children).filter((c) => c.localName === tag) : [];
    segments.unshift(same.length > 1 ? `${tag}[${same.indexOf(node) + 1}]` : tag);
    node = parent;
  }
  const xpath = segments.join("/"), attribute = (key) => el.getAttribute(key);
  if (only !== null && xpath !== only) return {xpath, skipped: true};
  return {xpath, named: "computedName" in el, name: el.computedName || null,
          role: el.computedRole || null, visible: el.checkVisibility({visibilityProperty: true}),
          attributes: {id: attribute("id"), name: attribute("name"), "aria-label": attribute("aria-label")}};
})"""
_PLACE = "(elements, el) => [elements.length, elements.indexOf(el)]"
# The element's ancestors that could scope a locator, nearest first: landmarks (Chromium's role and name, as
# Playwright's getByRole names them), elements with a test id, elements with an id.
_SCOPES = """(el, testIds) => {
  const landmarks = ["banner", "navigation", "main", "contentinfo", "complementary", "region", "form", "search"];
  const found = [];
  for (let node = el.parentNode; node;) {
    if (node instanceof ShadowRoot) { node = node.host; continue; }
    if (node.nodeType !== Node.ELEMENT_NODE) break;
    if (landmarks.includes(node.computedRole)) found.push({landmark: node.computedRole, name: node.computedName || ""});
    for (const key of testIds) if (node.getAttribute(key)) found.push({attribute: key, value: node.getAttribute(key)});
    if (node.id) found.push({id: node.id});
    node = node.parentNode;
  }
  return found;
}"""


@dataclass
class LiveMatch:
    """The live element a recorded one is, Chromium's role and name of it, how it was found, and the handles to let go
    of after use."""

    element: ElementHandle
    role: str | None
    name: str | None
    handles: list[JSHandle]
    how: str  # which of recording.find_element's rules found it

    async def dispose(self) -> None:
        await _dispose(self.handles)


async def find_live(page: Page, recorded: dict[str, Any]) -> LiveMatch | str:
    """One look at the page (every frame) for the recorded element: the match, or why there is none (NO_NAMES when
    the browser cannot tell accessible names, which no wait changes). recording.find_element's rules over every
    element of the tag; first over those at the recorded XPath alone, whose match by XPath is the same."""
    match = await look(page, recorded, str(recorded.get("x_path") or ""))
    if isinstance(match, LiveMatch) and match.how == "XPath":
        return match
    if isinstance(match, LiveMatch):
        await match.dispose()
    return await look(page, recorded, None)


async def look(page: Page, recorded: dict[str, Any], only: str | None) -> LiveMatch | str:
    """find_element's answer over the elements of the recorded tag at the XPath `only` (every one of them if None)."""
    tag = str(recorded.get("node_name") or "").lower()
    handles: list[JSHandle] = []
    live: list[tuple[JSHandle, int, LiveElement, dict[str, Any]]] = []
    for frame in page.frames:
        with contextlib.suppress(Exception):  # a frame that went away while it was read
            handle = await frame.evaluate_handle(_ELEMENTS, tag)
            handles.append(handle)
            facts = await handle.evaluate(_FACTS, only)
            live += [(handle, i, _live(tag, f), f) for i, f in enumerate(facts) if not f.get("skipped")]
    how = NO_NAMES
    if all(facts["named"] for *_, facts in live):
        index, how = find_element(recorded, [element for _, _, element, _ in live])
        if index is not None:
            handle, i, element, facts = live[index]
            found = (await handle.get_property(str(i))).as_element()
            if found is not None:
                return LiveMatch(found, facts["role"], element.name, handles, how)
    await _dispose(handles)
    return how


async def locator_facts(element: ElementHandle, recorded: dict[str, Any]) -> dict[str, Any]:
    """How the export's locator for the recorded element finds the live one, in its frame (see `_facts`), or why that
    is not known (`unknown`)."""
    locator = locate(recorded)
    facts = await _bounded(_facts(element, locator))
    return facts if isinstance(facts, dict) else unknown(locator, facts)


async def located(page: Page | None, recorded: dict[str, Any]) -> dict[str, Any]:
    """`locator_facts` of the live element the recorded one is, found as a replay finds it."""
    match = await _bounded(find_live(page, recorded)) if page is not None else "its page is gone"
    if not isinstance(match, LiveMatch):
        return unknown(locate(recorded), f"finding the element again: {match}")
    try:
        return await locator_facts(match.element, recorded)
    finally:
        await match.dispose()


def unknown(locator: Locator, why: str) -> dict[str, Any]:
    """The facts of a locator whose matches could not be counted, and why (the export says so beside it)."""
    return {**locator.facts(), "matches": None, "nth": None, "within": None, "unknown": why}


async def _bounded(work: Awaitable[T]) -> T | str:
    """What `work` returns within LOCATE_TIMEOUT_S (a page too busy to answer costs the step no more), else why not."""
    try:
        return await asyncio.wait_for(work, LOCATE_TIMEOUT_S)
    except TimeoutError:
        return f"the page did not answer within {LOCATE_TIMEOUT_S:g} s"
    except Exception as e:
        return f"the page could not say ({type(e).__name__})"


async def _facts(element: ElementHandle, locator: Locator) -> dict[str, Any] | str:
    """{by, value, name} of the locator, `matches` (elements it finds when the action runs), `nth` (this one's place
    among them, None if it is not one of them) and `within` (the nearest landmark or container, itself unique, in
    which the locator finds this element alone; only for a locator that finds several); or why not."""
    frame = await element.owner_frame()
    if frame is None:
        return "its frame is gone"
    matches, place = await live_locator(frame, locator).evaluate_all(_PLACE, element)
    facts: dict[str, Any] = {**locator.facts(), "matches": matches, "nth": place if place >= 0 else None, "within": None}
    if matches > 1 and place >= 0:
        facts["within"] = await _within(frame, element, locator)
    return facts


async def _within(frame: Frame, element: ElementHandle, locator: Locator) -> dict[str, str | None] | None:
    """The first scope, nearest landmark first, then the nearest container with a test id or an id, that is unique on
    the page and in which the locator finds this element alone."""
    found: list[dict[str, str]] = await element.evaluate(_SCOPES, list(TEST_ID_ATTRIBUTES))
    landmarks = [s for s in found if "landmark" in s]
    tries = [Locator(By.ROLE, s["landmark"]) for s in landmarks]
    tries += [Locator(By.ROLE, s["landmark"], s["name"]) for s in landmarks if s["name"]]
    tries += [Locator(By.TEST_ID, s["value"], s["attribute"]) for s in found if "attribute" in s]
    tries += [Locator(By.CSS, f"#{s['id']}") for s in found if "id" in s and plain_id(s["id"])]
    for scope in tries[:MOST_SCOPES]:
        outer = live_locator(frame, scope)
        if await outer.count() == 1 and await live_locator(outer, locator).evaluate_all(_PLACE, element) == [1, 0]:
            return scope.facts()
    return None


def live_locator(root: Frame | Found, locator: Locator) -> Found:
    """The locator an export writes (its `calls`), on the live page."""
    found: Any = root
    for call in calls(locator):
        found = getattr(found, call.method)(call.arg, **call.options)
    return cast("Found", found)


async def _dispose(handles: list[JSHandle]) -> None:
    for handle in handles:
        with contextlib.suppress(Exception):
            await handle.dispose()


def _live(tag: str, facts: dict[str, Any]) -> LiveElement:
    attributes = {k: v for k, v in (facts.get("attributes") or {}).items() if v is not None}
    return LiveElement(
        tag=tag, xpath=str(facts["xpath"]), name=facts["name"] or None, attributes=attributes, visible=bool(facts["visible"])
    )
