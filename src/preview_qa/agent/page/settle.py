"""Settle, then judge: follows every page's requests, navigations, WebSockets and DOM changes from the test's start,
and waits (bounded) until a page has rendered, no longer says it is busy, and is quiet apart from its polls: before
the final page's checks and screenshot, after each agent step, before a replay's page check."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from preview_qa.agent.page import every_page
from preview_qa.agent.page.drawing import Drawing, Look, watch
from preview_qa.agent.page.quiet import QuietRule, Settling
from preview_qa.events import PageSettled

if TYPE_CHECKING:
    from playwright.async_api import BrowserContext, Page, Request, WebSocket

# At most between two looks while the page waits on something (an event can end that wait sooner than time alone); a
# page that waits on nothing is looked at again when its quiet window could have ended (QuietRule.idle_for)
LOOK_S = 0.05


@dataclass
class Settled:
    """What settling found: how it ended, how long it took, what it waited for, where the page went meanwhile, the
    polls it did not wait for, and whether the page's content had rendered."""

    outcome: Settling
    waited_s: float
    waited_for: list[str] = field(default_factory=list)
    from_url: str = ""
    to_url: str = ""
    moved: bool = False  # a new document loaded while settling (a bounce to the sign-in page)
    polls: list[str] = field(default_factory=list)  # requests repeating on a timer, not waited for ("GET /api/tick")
    rendered: bool | None = None  # whether the main content showed something at the end (None: not known)
    restless: bool = False  # the bound was reached with nothing in flight: the page never stopped changing
    busy: list[str] = field(default_factory=list)  # what the page still said was work in progress at the bound

    def busy_error(self) -> str | None:
        """Why the page is not judged, if it still said it was busy at the bound: the test's error, never a verdict
        on a half-done page."""
        if not self.busy:
            return None
        return (
            f"the page still said it was busy after {round(self.waited_s, 1):g} s: {', '.join(self.busy)}; it is not "
            "judged while it does (give the test a larger expect.timeout if its work takes longer)"
        )

    def line(self) -> str:
        """`waited 3.1 s for POST /api/save`, or that the page was already quiet; for events, reasons and the report."""
        what = f" for {', '.join(self.waited_for)}" if self.waited_for else " for the page to stay quiet"
        quiet = "the page was quiet" + (f" apart from its polls ({', '.join(self.polls)})" if self.polls else "")
        waited = bool(self.waited_for) or self.waited_s >= 0.05
        said = f"waited {self.waited_s:.1f} s{what}" if waited else quiet
        if self.outcome is Settling.SETTLED and waited and self.polls:
            said += f"; {quiet}"
        if self.busy:
            said += f"; at the bound the page still said it was busy ({', '.join(self.busy)})"
        elif self.outcome is Settling.BOUND_REACHED:
            said += " and judged the page as it was at the bound"
            if self.rendered is False:
                said += ": its content never rendered"
            elif self.restless:
                said += ": it never stopped changing"
        if self.moved or self.to_url != self.from_url:
            said += f"; the page moved to {self.to_url}"
        return said

    def detail(self) -> PageSettled:
        return PageSettled(
            outcome=str(self.outcome),
            waited_s=round(self.waited_s, 2),
            waited_for=self.waited_for,
            from_url=self.from_url,
            to_url=self.to_url,
            moved=self.moved,
            polls=self.polls,
            rendered=self.rendered,
            busy=self.busy,
            summary=self.line(),
        )


class PageSettler:
    """One QuietRule per page of the test's context, fed by Playwright's events since the test began, by the test's
    actions (`acted`) and by looks at the page's drawing (agent/page/drawing.py)."""

    def __init__(self) -> None:
        self._rules: dict[Page, QuietRule] = {}
        self._drawings: dict[Page, asyncio.Task[Drawing | None]] = {}
        self._context: BrowserContext | None = None

    def attach(self, context: BrowserContext) -> None:
        self._context = context
        every_page(context, self._watch)

    def waiting(self, page: Page) -> bool:
        """Whether `page` waits on something now: a request, a navigation, its content, a socket's answer."""
        rule = self._rules.get(page)
        return rule is not None and bool(rule.waiting_on(_now()))

    def acted(self) -> None:
        """The test is about to act on its pages (an agent's or a replay's action): settling follows what it causes."""
        now = _now()
        for rule in self._rules.values():
            rule.acted(now)

    def _watch(self, page: Page) -> None:
        rule = self._rules.setdefault(page, QuietRule(last_activity=_now()))
        page.on("request", lambda request: self._started(rule, page, request))
        page.on("response", lambda response: self._answered(rule, response.request))
        page.on("requestfinished", lambda request: self._finished(rule, page, request, committed=True))
        page.on("requestfailed", lambda request: self._finished(rule, page, request, committed=False))
        page.on("load", lambda _: rule.loaded(_now()))
        page.on("websocket", lambda socket: self._socket(rule, page, socket))
        drawing = watch(self._context, page) if self._context is not None else None
        if drawing is not None:
            self._drawings[page] = drawing

    def _started(self, rule: QuietRule, page: Page, request: Request) -> None:
        with contextlib.suppress(Exception):  # a service worker's request has no frame
            if request.is_navigation_request() and request.frame == page.main_frame:
                rule.leaving()
            label = _label(request, page.url)
            rule.started(request, label, request.resource_type, _now(), repeat=_repeat(label, request))

    def _answered(self, rule: QuietRule, request: Request) -> None:
        """A fetch or XHR counts until it is answered: its body may never be read (a page that checks `r.ok` only),
        and Chromium then never reports it finished."""
        with contextlib.suppress(Exception):
            if request.resource_type in ("fetch", "xhr"):
                rule.finished(request, _now())

    def _finished(self, rule: QuietRule, page: Page, request: Request, committed: bool) -> None:
        rule.finished(request, _now())
        with contextlib.suppress(Exception):
            if committed and request.is_navigation_request() and request.frame == page.main_frame:
                rule.navigating(request.url, _now())  # its document arrived: pending until its load event

    def _socket(self, rule: QuietRule, page: Page, socket: WebSocket) -> None:
        rule.socket_opened(socket, _where(socket.url, page.url), _now())
        socket.on("framereceived", lambda _: rule.socket_message(socket, _now()))
        socket.on("framesent", lambda _: rule.socket_sent(socket, _now()))
        socket.on("close", lambda _: rule.socket_closed(socket, _now()))
        socket.on("socketerror", lambda _: rule.socket_closed(socket, _now()))

    async def look(self, page: Page) -> Look | None:
        """The page's drawing now (what changed since the last look, whether its content shows), if it can be read."""
        task = self._drawings.get(page)
        if task is None and self._context is not None and not page.is_closed():
            task = watch(self._context, page)  # a page from before the settler was attached
            if task is not None:
                self._drawings[page] = task
        drawing = await task if task is not None else None
        return await drawing.look() if drawing is not None else None

    async def settle(self, page: Page, bound_s: float, restless_s: float | None = None) -> Settled:
        """Wait until `page` is settled or `bound_s` seconds have passed (`restless_s`, for a page that waits on nothing
        but keeps changing); a navigation meanwhile is followed."""
        rule = self._rules.get(page)
        since, from_url = _now(), page.url
        if rule is None:  # a page we never saw start: nothing known to wait for
            return Settled(Settling.SETTLED, 0.0, from_url=from_url, to_url=from_url)
        rule.start_settle()
        while True:
            await self._feed(rule, page)
            state = rule.state(_now(), since, bound_s, restless_s)
            rule.note_waits(_now(), since)
            if state is not Settling.BUSY or page.is_closed():
                break
            idle = rule.idle_for(_now(), since, bound_s, restless_s)
            await asyncio.sleep(max(0.005, min(LOOK_S, rule.next_look(_now(), since, bound_s)) if idle is None else idle))
        outcome = Settling.BOUND_REACHED if state is Settling.BUSY else state  # a closed page is judged as it is
        waiting = bool(rule.waiting_on(_now()))
        rule.end_settle()
        return Settled(
            outcome,
            _now() - since,
            rule.longest_waits(),
            from_url=from_url,
            to_url="" if page.is_closed() else page.url,
            moved=rule.moved,
            polls=sorted(rule.polls_seen),
            rendered=rule.shown,
            restless=outcome is Settling.BOUND_REACHED and not waiting,
            busy=list(rule.busy) if outcome is Settling.BOUND_REACHED else [],
        )

    async def _feed(self, rule: QuietRule, page: Page) -> None:
        """What the page drew since the last look, whether its content shows (a page that is no web page, such as
        about:blank, will never show more: it is not waited for), and what it says is work in progress."""
        seen = None if page.is_closed() else await self.look(page)
        if seen is not None:
            now = _now()
            for ago in seen.drawn_ago:
                rule.drew(now - ago)
            rule.content(seen.shown or not seen.web)
            rule.announced(seen.busy, now)


def _label(request: Request, page_url: str) -> str:
    """`POST /api/save` on the page's own origin, `GET host/path` elsewhere; never the query (it may hold a secret)."""
    return f"{request.method} {_where(request.url, page_url)}"


def _where(url: str, page_url: str) -> str:
    there, page = urlsplit(url), urlsplit(page_url)
    return there.path or "/" if there.netloc == page.netloc else f"{there.netloc}{there.path}"


def _repeat(label: str, request: Request) -> str:
    """What makes two requests the same one asked again: method, path and body (a GraphQL query's differs each time)."""
    body = b""
    with contextlib.suppress(Exception):
        body = request.post_data_buffer or b""
    return f"{label} {hashlib.sha256(body).hexdigest()[:16]}" if body else label


def _now() -> float:
    return asyncio.get_running_loop().time()
