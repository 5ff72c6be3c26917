"""What the test's pages showed a person over time, by the rule of agent/page/shown.js: every line of text as it came
and went, in every page, its same-process frames and open shadow roots (and each cross-origin frame that has a process
of its own), and the pictures in view that text could be drawn in.

A watcher runs in a world of our own in each document (`Page.addScriptToEvaluateOnNewDocument`, as
agent/page/drawing.py watches drawing): whenever the DOM changed (in the document or one of its open shadow roots,
agent/page/roots.js), a field was typed into or an animation ran (a toast fading in), it reads what shows and hands
what came and went to us through a binding only that world has (`Runtime.addBinding`), so a navigation loses nothing
and the page's scripts can neither see nor feed it. This is the one read of each step's page the quotes need, and what
`expect.appeared` and `expect.not_appeared` judge: the window starts at the last action that changed the page (the mark
the server-error rule uses, agent/evidence/evidence.py). Those checks are told by two watchers at once: this record (a
toast that came and went before the checks began, across a navigation too) and the page itself, looked at by the text
checks' own call in each frame (agent/page/shown.py), the check's one Playwright call in the trace."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from preview_qa.agent.page import every_page, roots
from preview_qa.agent.page.shown import Hit, look_for_text, rule
from preview_qa.verdict.quotes import PagesShown, ShownText, shows_text

if TYPE_CHECKING:
    from playwright.async_api import BrowserContext, CDPSession, Frame, Page

WORLD = "preview-qa-sightings"
BINDING = "__pqaSighted"
MAX_LINES = 20_000  # lines kept for the whole test; past them the record says it is incomplete
POLL_S = 0.1  # between two looks at what arrived, while a check waits
PICTURES = {"img": "an image", "canvas": "a canvas", "video": "a video", "object": "an embed"}
PICTURES["embed"] = PICTURES["object"]
LOOK_TIMEOUT_S = 1.0  # a page that does not answer a last look (a dialog open) is judged on what it sent before

# In each document: look again whenever something changed (and while animations run), send what came and went. The
# first look of a document sends everything it shows; its end (pagehide) takes everything away.
_WATCHER = """(() => {
  if (globalThis.__pqaSightings) return;
  const rule = (%(rule)s)();
  const FAST_MS = 150, SLOW_MS = 500, FOLLOW_MS = 1000, FRAME_MS = 50;
  const doc = Math.random().toString(36).slice(2) + performance.timeOrigin.toString(36);
  const state = globalThis.__pqaSightings = {shown: new Set(), pictures: "", timer: 0, due: 0, changed: 0, moving: 0,
    costs: [], last: -Infinity, frame: 0};
  const send = (message) => {
    try {
      globalThis.%(binding)s(JSON.stringify({doc, url: location.href, top: window === window.top,
        at: performance.timeOrigin + performance.now(), ...message}));
    } catch (e) {}
  };
  // What a read costs: the cheapest of the last few (a read the renderer was preempted in costs no more); a page whose
  // reads are costly is read at most once in 6 times that, so the watcher takes at most a sixth of its renderer.
  const spacing = () => 6 * (state.costs.length ? Math.min(...state.costs) : 0);
  // The next look: `ms` from now, or later on a costly page. A change brings a look already due later forward: a toast
  // shown 0.3 s while a look waits 0.5 s would be missed.
  const schedule = (ms) => {
    const wait = Math.max(ms, spacing()), due = performance.now() + wait;
    if (state.timer && state.due <= due) return;
    clearTimeout(state.timer);
    state.due = due; state.timer = setTimeout(sample, wait);
  };
  const sample = () => {
    clearTimeout(state.timer); state.timer = 0;
    state.sweep();  // a shadow root attached to a host already in the page: watched from now, read below
    const t0 = performance.now(), seen = new Set();
    const read = document.documentElement ? rule.read(document) : {lines: [], pictures: []};
    for (const line of read.lines) seen.add(line.text);
    const added = [...seen].filter((t) => !state.shown.has(t)), removed = [...state.shown].filter((t) => !seen.has(t));
    const pictures = read.pictures;
    if (added.length || removed.length || pictures.join() !== state.pictures) send({added, removed, pictures});
    // the first read of a document is a cold one (its code compiled, its styles computed once): not what reads cost
    if (state.last !== -Infinity) state.costs = [...state.costs.slice(-3), performance.now() - t0];
    state.shown = seen; state.pictures = pictures.join(); state.last = performance.now();
    const again = added.length || removed.length ? FAST_MS : SLOW_MS;
    if (state.moving > 0 || performance.now() - state.changed < FOLLOW_MS) schedule(again);
  };
  // A change is read in the frame that would first paint it, before it is painted, or in the first frame FRAME_MS
  // (or a costly page's spacing) after the last read: a toast is seen however late a timer would fire on a busy
  // machine, and a page that changes every frame is read 20 times a second, not 60. A hidden page paints no frames:
  // the timer looks there.
  const framed = () => {
    state.frame = 0;
    if (performance.now() - state.last >= Math.max(FRAME_MS, spacing())) sample();
    else if (state.changed > state.last) state.frame = requestAnimationFrame(framed);  // a change not read yet
  };
  const changed = () => {
    state.changed = performance.now();
    schedule(FAST_MS);
    if (!state.frame) state.frame = requestAnimationFrame(framed);
  };
  state.sample = sample;
  state.sweep = (%(roots)s)(changed, {subtree: true, childList: true, characterData: true, attributes: true});
  for (const type of ["input", "change", "resize", "load"]) addEventListener(type, changed, true);
  for (const type of ["transitionrun", "animationstart"]) addEventListener(type, () => { state.moving++; changed(); }, true);
  for (const type of ["transitionend", "transitioncancel", "animationend", "animationcancel"])
    addEventListener(type, () => { state.moving = Math.max(0, state.moving - 1); changed(); }, true);
  addEventListener("pagehide", () => send({removed: [...state.shown], gone: true}), true);
  changed();
})()"""
_LOOK = "globalThis.__pqaSightings && globalThis.__pqaSightings.sample()"


@functools.cache
def _watcher() -> str:
    return _WATCHER % {"rule": rule(), "roots": roots(), "binding": BINDING}


@dataclass
class Sighting:
    """One line of text a document showed, from when (seconds since the epoch) until when (None: still shown)."""

    text: str
    doc: str
    where: str
    since: float
    until: float | None = None


@dataclass(frozen=True)
class _Watched:
    cdp: CDPSession
    worlds: set[int]  # our world's execution context in each of its documents


class Sightings:
    """The test's record of what its pages showed; `step_now` says which step is under way (None: none yet)."""

    def __init__(self, step_now: Callable[[], int | None], origin: str = ""):
        self._step_now, self._origin = step_now, origin
        self.ending = False  # set once the final page's checks begin: what shows from then on shows on the final page
        self._context: BrowserContext | None = None
        self._watched: list[_Watched] = []
        self._pages: set[Page] = set()
        self._sessions: dict[Page, CDPSession] = {}  # each page's own, lent to the checks (agent/page/shown.py)
        self._frames: set[Frame] = set()
        self._installing: set[asyncio.Task[None]] = set()
        self.lines: list[Sighting] = []
        self._passages: list[list[Sighting]] = []  # lines that showed together, in order
        self._open: dict[tuple[str, str], Sighting] = {}
        self._pictures: list[str] = []
        self._top: str | None = None  # the top document now
        self.complete = True
        self.marked_at = time.time()  # the last action that changed the page; the start until there is one

    def attach(self, context: BrowserContext) -> None:
        """Watch every page of the test's context, those it opens later and their cross-origin frames."""
        self._context = context
        every_page(context, self._watch)

    async def installed(self) -> None:
        """Until the watcher is in every page being watched (those of the context when attached, and any since): from
        then on, nothing their documents show is missed. Before, what a page showed while the watcher was still being
        installed (a few round trips to the browser, long on a busy machine) and was gone once it ran went unseen."""
        while self._installing:
            await asyncio.wait(set(self._installing))

    def session(self, page: Page) -> CDPSession | None:
        """The DevTools session the record keeps to `page`, for a look of the checks' own (one the trace does not show as
        a call of the checks)."""
        return self._sessions.get(page)

    def mark(self) -> None:
        """An action that changes the page is about to run: the window of expect.appeared/not_appeared starts now."""
        self.marked_at = time.time()

    def _watch(self, page: Page) -> None:
        self._pages.add(page)
        self._start(page)
        page.on("framenavigated", lambda frame: self._start(frame) if frame.parent_frame is not None else None)

    def _start(self, target: Page | Frame) -> None:
        if target in self._frames:
            return
        with contextlib.suppress(RuntimeError):  # no event loop: a stand-in's context in a unit test
            task = asyncio.get_running_loop().create_task(self._install(target))
            self._installing.add(task)
            task.add_done_callback(self._installing.discard)

    async def _install(self, target: Page | Frame) -> None:
        """The watcher in `target`'s documents: a page, or a frame with a process of its own (a same-process frame is
        its page's, and Playwright opens no session of its own for it)."""
        if self._context is None or not hasattr(self._context, "new_cdp_session"):
            return
        with contextlib.suppress(Exception):
            cdp = await self._context.new_cdp_session(target)
            self._frames.add(target)  # type: ignore[arg-type]
            watched = _Watched(cdp, set())
            cdp.on("Runtime.executionContextCreated", lambda e: _world_created(watched, e))
            cdp.on("Runtime.executionContextDestroyed", lambda e: watched.worlds.discard(e.get("executionContextId")))
            cdp.on("Runtime.bindingCalled", lambda e: self._heard(e["payload"]) if e.get("name") == BINDING else None)
            await cdp.send("Runtime.enable")
            await cdp.send("Runtime.addBinding", {"name": BINDING, "executionContextName": WORLD})
            await cdp.send("Page.enable")
            script = {"source": _watcher(), "worldName": WORLD, "runImmediately": True}
            await cdp.send("Page.addScriptToEvaluateOnNewDocument", script)
            self._watched.append(watched)
            if target in self._pages:
                self._sessions[target] = cdp

    def _heard(self, payload: str) -> None:
        """What came and went in one document (its watcher's message)."""
        with contextlib.suppress(ValueError, KeyError, TypeError):
            message: dict[str, Any] = json.loads(payload)
            doc, at = str(message["doc"]), float(message["at"]) / 1000
            if message.get("top") and doc != self._top:  # a new top document: the last one is gone
                self._close(self._top, at)
                self._top = doc
            for text in message.get("removed") or []:
                if (line := self._open.pop((doc, str(text)), None)) is not None:
                    line.until = at
            where = f"{self._when()}, on {_place(str(message.get('url', '')), self._origin)}"
            self._add(doc, where, at, [str(t) for t in message.get("added") or []])
            for kind in message.get("pictures") or []:  # the first place each kind showed is enough to name
                words = PICTURES.get(str(kind), "a picture")
                if not any(p.startswith(f"{words} ") for p in self._pictures):
                    self._pictures.append(f"{words} in view {where}")
            if message.get("gone"):
                self._close(doc, at)

    def _when(self) -> str:
        step = self._step_now()
        return "on the final page" if self.ending else "before the first step" if step is None else f"at step {step}"

    def _add(self, doc: str, where: str, at: float, texts: list[str]) -> None:
        if len(self.lines) + len(texts) > MAX_LINES:
            self.complete, texts = False, texts[: max(0, MAX_LINES - len(self.lines))]
        passage = [Sighting(text, doc, where, at) for text in texts]
        for line in passage:
            self._open[(doc, line.text)] = line
        self.lines += passage
        if passage:
            self._passages.append(passage)

    def _close(self, doc: str | None, at: float) -> None:
        for key in [key for key in self._open if key[0] == doc]:
            self._open.pop(key).until = at

    async def look(self) -> None:
        """Ask every document for what it shows now (what it sends arrives before the answer)."""
        for watched in list(self._watched):
            for world in list(watched.worlds):
                with contextlib.suppress(Exception):
                    async with asyncio.timeout(LOOK_TIMEOUT_S):
                        await watched.cdp.send("Runtime.evaluate", {"expression": _LOOK, "contextId": world})

    def shown_since(self, text: str, since: float) -> Sighting | None:
        """The first line that showed `text` (a text check's rule) at some moment from `since` on."""
        return next((s for s in self.lines if (s.until is None or s.until >= since) and shows_text(s.text, text)), None)

    async def seen(self, text: str, until: float) -> Sighting | None:
        """The first line that showed `text` after the mark, waiting for one until `until` (time.monotonic())."""
        while (found := self.shown_since(text, self.marked_at)) is None and time.monotonic() < until:
            await asyncio.sleep(POLL_S)
        return found

    def final_lines(self) -> list[str]:
        """The lines the top document shows now, in the order they came."""
        return [s.text for s in self.lines if s.doc == self._top and s.until is None]

    def shown(self, redact: Callable[[str], str]) -> PagesShown:
        """The record for the verdict (verdict/quotes.py), every text through `redact`."""
        return PagesShown(
            texts=[ShownText(redact("\n".join(s.text for s in p)), redact(p[0].where)) for p in self._passages],
            final=[redact(line) for line in self.final_lines()],
            pictures=[redact(p) for p in self._pictures],
            read=bool(self._watched),
            complete=self.complete,
        )


def _world_created(watched: _Watched, event: dict[str, Any]) -> None:
    context = event.get("context") or {}
    if context.get("name") == WORLD:
        watched.worlds.add(int(context["id"]))


def _place(url: str, origin: str) -> str:
    """Where a document is, in a reason: its path (on its host, off the preview's origin), never its query (it may
    hold a secret)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        return url.split("?")[0] or "a blank page"
    here = f"{parts.scheme}://{parts.netloc}" == origin.rstrip("/")
    return (parts.path or "/") if here else f"{parts.netloc}{parts.path or '/'}"


@dataclass(frozen=True)
class Appearance:
    """What the watch saw: the line the record kept (from when, until when), else the page's own line that showed it
    (a frame whose watcher could not be installed), else nothing; and how long it watched."""

    sighting: Sighting | None
    hit: Hit | None
    waited_s: float

    @property
    def seen(self) -> bool:
        return self.sighting is not None or self.hit is not None


async def appeared(page: Page, sightings: Sightings, text: str, wait: float) -> Appearance:
    """expect.appeared: `text` showed after the mark, or shows within `wait` seconds. When the record already has it,
    the page is looked at once, without waiting."""
    start = time.monotonic()
    await sightings.look()
    already = sightings.shown_since(text, sightings.marked_at) is not None
    return await _watch(page, sightings, text, 0.0 if already else wait, start)


async def not_appeared(page: Page, sightings: Sightings, text: str, window: float, wait: float) -> Appearance:
    """expect.not_appeared: watched until `window` seconds after the mark (at most `wait` from now); the first sighting
    ends the watch."""
    start = time.monotonic()
    left = min(wait, max(0.0, sightings.marked_at + window - time.time()))
    return await _watch(page, sightings, text, left, start)


async def _watch(page: Page, sightings: Sightings, text: str, wait: float, start: float) -> Appearance:
    """Until the record or the page shows `text`, or `wait` has passed; then the record brought up to date."""
    record = asyncio.ensure_future(sightings.seen(text, time.monotonic() + wait))
    look = asyncio.ensure_future(look_for_text(page, text, wait, shown=True))
    try:
        done, _ = await asyncio.wait({record, look}, return_when=asyncio.FIRST_COMPLETED)
        if not (record in done and record.result() is not None) and not (look in done and look.result().hit is not None):
            await asyncio.wait({record, look})  # one ended seeing nothing: the other ends by the same bound
    finally:
        for task in (record, look):
            task.cancel()
    hit = None
    if look.done() and not look.cancelled():
        with contextlib.suppress(Exception):
            hit = look.result().hit
    await sightings.look()
    sighting = sightings.shown_since(text, sightings.marked_at)
    return Appearance(sighting, None if sighting is not None else hit, round(time.monotonic() - start, 2))
