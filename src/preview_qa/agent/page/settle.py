"""Settle, then judge: follows every page's requests and navigations from the test's start, and waits (bounded) until
the final page is quiet before its checks and screenshot run."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from preview_qa.agent.page import every_page
from preview_qa.agent.page.quiet import QuietRule, Settling

if TYPE_CHECKING:
    from playwright.async_api import BrowserContext, Page, Request

LOOK_S = 0.05  # at most between two looks at the rule: an event can end a wait sooner than time alone


@dataclass
class Settled:
    """What settling found: how it ended, how long it took, what it waited for, and where the page went meanwhile."""

    outcome: Settling
    waited_s: float
    waited_for: list[str] = field(default_factory=list)
    from_url: str = ""
    to_url: str = ""
    moved: bool = False  # a new document loaded while settling (a bounce to the sign-in page)

    def line(self) -> str:
        """`waited 3.1 s for POST /api/save`, or that the page was already quiet; for events, reasons and the report."""
        what = f" for {', '.join(self.waited_for)}" if self.waited_for else " for the page to stay quiet"
        said = f"waited {self.waited_s:.1f} s{what}" if self.waited_for or self.waited_s >= 0.05 else "the page was quiet"
        if self.outcome is Settling.BOUND_REACHED:
            said += " and judged the page as it was at the bound"
        if self.moved or self.to_url != self.from_url:
            said += f"; the page moved to {self.to_url}"
        return said

    def detail(self) -> dict[str, Any]:
        return {
            "outcome": str(self.outcome),
            "waited_s": round(self.waited_s, 2),
            "waited_for": self.waited_for,
            "from_url": self.from_url,
            "to_url": self.to_url,
            "moved": self.moved,
            "summary": self.line(),
        }


class PageSettler:
    """One QuietRule per page of the test's context, fed by Playwright's events since the test began."""

    def __init__(self) -> None:
        self._rules: dict[Page, QuietRule] = {}

    def attach(self, context: BrowserContext) -> None:
        every_page(context, self._watch)

    def _watch(self, page: Page) -> None:
        rule = self._rules.setdefault(page, QuietRule(last_activity=_now()))
        page.on("request", lambda request: self._started(rule, page, request))
        page.on("response", lambda response: self._answered(rule, response.request))
        page.on("requestfinished", lambda request: self._finished(rule, page, request, committed=True))
        page.on("requestfailed", lambda request: self._finished(rule, page, request, committed=False))
        page.on("load", lambda _: rule.loaded(_now()))

    def _started(self, rule: QuietRule, page: Page, request: Request) -> None:
        with contextlib.suppress(Exception):  # a service worker's request has no frame
            rule.started(request, _label(request, page.url), request.resource_type, _now())

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

    async def settle(self, page: Page, bound_s: float) -> Settled:
        """Wait until `page` is settled or `bound_s` seconds have passed; a navigation meanwhile is followed."""
        rule = self._rules.get(page)
        since, from_url = _now(), page.url
        if rule is None:  # a page we never saw start: nothing known to wait for
            return Settled(Settling.SETTLED, 0.0, from_url=from_url, to_url=from_url)
        rule.waited_on.clear()
        rule.moved = False
        while (state := rule.state(_now(), since, bound_s)) is Settling.BUSY and not page.is_closed():
            rule.note_waits(_now(), since)
            await asyncio.sleep(min(LOOK_S, max(0.005, rule.next_look(_now(), since, bound_s))))
        rule.note_waits(_now(), since)
        outcome = Settling.BOUND_REACHED if state is Settling.BUSY else state  # a closed page is judged as it is
        return Settled(
            outcome,
            _now() - since,
            rule.longest_waits(),
            from_url=from_url,
            to_url="" if page.is_closed() else page.url,
            moved=rule.moved,
        )


def _label(request: Request, page_url: str) -> str:
    """`POST /api/save` on the page's own origin, `GET host/path` elsewhere; never the query (it may hold a secret)."""
    url, page = urlsplit(request.url), urlsplit(page_url)
    where = url.path or "/" if url.netloc == page.netloc else f"{url.netloc}{url.path}"
    return f"{request.method} {where}"


def _now() -> float:
    return asyncio.get_running_loop().time()
