"""Whether a page is still drawing and whether its main content shows, read in a world of our own.

A MutationObserver is installed in every document of the page before its own scripts run
(`Page.addScriptToEvaluateOnNewDocument` into an isolated world, as agent/guards/masking.py masks): the page's scripts can
neither see it nor stop it, and it shares only the DOM with them. Each look asks that world (`Runtime.evaluate`) for the
moments the DOM changed since the last look, in the document and its open shadow roots (agent/page/roots.js: where a
Panel app draws its answer), and whether the page's <main> (its body, when it has none) shows anything a person could
see, by the rule of agent/page/shown.js: a shell holding only its stylesheet has not drawn; and what the page says is
work in progress (aria-busy, a progressbar without a value or whose value still moves: `_BUSY`). Only the top frame's
document is watched: a frame's own changes are not seen, nor what a canvas draws."""

from __future__ import annotations

import asyncio
import contextlib
import functools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from preview_qa.agent.page import roots
from preview_qa.agent.page.quiet import Announced, Busy
from preview_qa.agent.page.shown import rule_in_world

if TYPE_CHECKING:
    from playwright.async_api import BrowserContext, CDPSession, Page

WORLD = "preview-qa-settle"
READ_TIMEOUT_S = 1.0  # a look at a page that does not answer (a dialog open) is skipped, not waited for

# Each change of the DOM, in the document or one of its open shadow roots (agent/page/roots.js), as a moment on the
# document's clock (performance.now(), ms); at most the last 200 are kept, and when each progress value was last set
# (aria-valuenow, a <progress>'s value). The rule of what a person sees (agent/page/shown.js) is made once in this
# world, for the reads below.
_OBSERVER = """(() => {
  if (globalThis.__settle) return;
  const state = globalThis.__settle = {drawn: [], changed: true, shown: null, set: new WeakMap()};
  state.drew = (records) => {
    state.drawn.push(performance.now()); state.changed = true;
    if (state.drawn.length > 200) state.drawn.shift();
    for (const r of records || []) {
      if (r.attributeName === "aria-valuenow" || (r.attributeName === "value" && r.target.localName === "progress")) {
        state.set.set(r.target, performance.now());
      }
    }
  };
  state.sweep = (%s)(state.drew, {subtree: true, childList: true, characterData: true, attributes: true});
  state.busy = (%s)(state);
})()"""

# What the page says is work in progress, by the platform's own semantics (never its words): each visible element with
# aria-busy="true", each visible progressbar (role, or <progress>) without a value or whose value was set within the
# last second short of its maximum. Visible by the rule of the text checks (it shows text or a picture), or, for a bar
# or spinner drawing no text (a native <progress>, a CSS spinner), by its own box: rendered, not transparent, of some
# size, not off the page's left or top. One querySelectorAll in the document and each open shadow root; at most 3; read
# again only when the DOM changed since the last look (or a bar was moving: its second runs out).
_BUSY = """(state) => {
  const SELECTOR = "[aria-busy=true], [role~=progressbar], progress", MOVING_MS = 1000, MOST = 3;
  const text = (s) => (s || "").replace(/\\s+/g, " ").trim();
  const how = (el, now) => {
    const native = el.localName === "progress";
    if (native || /(^|\\s)progressbar(\\s|$)/.test(el.getAttribute("role") || "")) {
      const value = el.getAttribute(native ? "value" : "aria-valuenow");
      if (value === null || !text(value)) return "indeterminate";
      const max = native ? el.max : parseFloat(el.getAttribute("aria-valuemax") || "100");
      if (now - (state.set.get(el) ?? -Infinity) < MOVING_MS && !(parseFloat(value) >= max)) return "moving";
    }
    return el.getAttribute("aria-busy") === "true" ? "busy" : "";
  };
  const visible = (el, rule) => {
    if (!el.checkVisibility({opacityProperty: true, visibilityProperty: true})) return false;
    if (rule.shows(el)) return true;
    const r = el.getBoundingClientRect();
    return r.width >= 2 && r.height >= 2 && r.right + scrollX > 0 && r.bottom + scrollY > 0;
  };
  const nameOf = (el, rule) => {
    const root = el.getRootNode();
    const by = (el.getAttribute("aria-labelledby") || "").split(/\\s+/).filter(Boolean)
      .map((id) => root.getElementById && root.getElementById(id)).filter(Boolean).map((n) => n.textContent).join(" ");
    const labels = el.labels ? Array.from(el.labels).map((l) => l.textContent).join(" ") : "";
    const first = (rule.lines(el, 1)[0] || {}).text;
    return text(el.getAttribute("aria-label") || by || labels || first || el.getAttribute("title")).slice(0, 200);
  };
  let last = null;  // the last read's finding: the same until the DOM changes, unless a bar was moving
  return (changed) => {
    if (!changed && last && !last.some((b) => b.how === "moving")) return last;
    const rule = globalThis.__pqaRule, now = performance.now(), found = last = [];
    for (const root of [document, ...state.sweep.roots()]) {
      for (const el of root.querySelectorAll(SELECTOR)) {
        const kind = how(el, now);
        if (!kind || !visible(el, rule)) continue;
        const bar = el.localName !== "progress" && (kind !== "busy" || el.matches("[role~=progressbar]"));
        found.push({how: kind, what: bar ? "progressbar" : `<${el.localName}>`, name: nameOf(el, rule)});
        if (found.length >= MOST) return found;
      }
    }
    return found;
  };
}"""

# Whether the main content shows something a person could see (text outside <style>, <script> and <template>, or an
# image, canvas, field, frame... of some size), also in open shadow roots: a shell holding only its stylesheet has not
# drawn. Looked at again only when the DOM changed since (the read lays the page out).
_READ = """(() => {
  const state = globalThis.__settle;
  if (state.sweep()) state.drew();  // a shadow root attached to a host already in the page: content drawn since
  const changed = state.changed || state.shown === null;
  if (changed) {
    const main = document.querySelector("main, [role=main]") || document.body;
    state.shown = !!main && globalThis.__pqaRule.shows(main); state.changed = false;
  }
  const drawn = state.drawn; state.drawn = [];
  const busy = state.busy(changed);
  return {now: performance.now(), drawn, shown: state.shown, web: /^https?:$/.test(location.protocol), busy};
})()"""


@functools.cache
def _observer() -> str:
    return f"{rule_in_world('__pqaRule')}\n{_OBSERVER % (roots(), _BUSY)}"


@dataclass(frozen=True)
class Look:
    """One look at the page: when its DOM changed since the last look (seconds before the look), whether its main
    content shows something, whether it is a web page (about:blank or an error page will never show more), and what it
    says is work in progress."""

    drawn_ago: list[float]
    shown: bool
    web: bool
    busy: list[Busy] = field(default_factory=list)


class Drawing:
    """The observer in one page's documents, and looks at it; every call is bounded and never raises."""

    def __init__(self, cdp: CDPSession, frame_id: str):
        self._cdp, self._frame_id = cdp, frame_id

    @classmethod
    async def install(cls, context: BrowserContext, page: Page) -> Drawing | None:
        """Watch `page` from its next document on (and the current one); None if it cannot be (the page closed)."""
        with contextlib.suppress(Exception):
            cdp = await context.new_cdp_session(page)
            await cdp.send("Page.enable")
            await cdp.send(
                "Page.addScriptToEvaluateOnNewDocument", {"source": _observer(), "worldName": WORLD, "runImmediately": True}
            )
            tree = await cdp.send("Page.getFrameTree")
            return cls(cdp, tree["frameTree"]["frame"]["id"])
        return None

    async def look(self) -> Look | None:
        """The page now, or None if it did not answer in time."""
        with contextlib.suppress(Exception):
            async with asyncio.timeout(READ_TIMEOUT_S):
                seen = await self._evaluate(f"(globalThis.__settle && globalThis.__pqaRule) ? {_READ} : null")
                if seen is None:  # a document from before: watched from now
                    seen = await self._evaluate(f"{_observer()};\n{_READ}")
                return _look(seen)
        return None

    async def _evaluate(self, expression: str) -> Any:
        world = await self._cdp.send("Page.createIsolatedWorld", {"frameId": self._frame_id, "worldName": WORLD})
        result = await self._cdp.send(
            "Runtime.evaluate", {"expression": expression, "returnByValue": True, "contextId": world["executionContextId"]}
        )
        return result["result"]["value"]


def _look(value: dict[str, Any]) -> Look:
    now = float(value["now"])
    busy = [Busy(Announced(b["how"]), str(b["what"]), str(b["name"])) for b in value.get("busy") or []]
    return Look([(now - float(t)) / 1000 for t in value["drawn"]], bool(value["shown"]), bool(value["web"]), busy)


def watch(context: BrowserContext, page: Page) -> asyncio.Task[Drawing | None] | None:
    """Start installing the observer in `page` (its first document may be loading already); None outside an event
    loop or where the context cannot open a DevTools session (a test's stand-in)."""
    if not hasattr(context, "new_cdp_session"):
        return None
    try:
        return asyncio.get_running_loop().create_task(Drawing.install(context, page))
    except RuntimeError:
        return None
