"""What settling tells (agent/page/settle.py): the settle event's wording, and waited_s as the time really waited, never
the budget; PageSettler on a page whose events a clock of the test's fires, so no browser and no real waiting."""

from __future__ import annotations

import asyncio
import heapq
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest

from preview_qa.agent.page import settle
from preview_qa.agent.page.quiet import Settling
from preview_qa.agent.page.settle import PageSettler, Settled

APP = "http://app.test"


class Clock:
    """The settler's clock: `sleep` moves it on and fires the page events due meanwhile, in order."""

    def __init__(self) -> None:
        self.now = 0.0
        self._due: list[tuple[float, int, Callable[[], None]]] = []

    def at(self, when: float, fire: Callable[[], None]) -> None:
        heapq.heappush(self._due, (when, len(self._due), fire))

    async def sleep(self, seconds: float) -> None:
        self.now += seconds
        while self._due and self._due[0][0] <= self.now:
            heapq.heappop(self._due)[2]()


class Request:
    def __init__(self, method: str, path: str, resource_type: str = "fetch") -> None:
        self.method, self.url, self.resource_type, self.frame = method, APP + path, resource_type, None

    def is_navigation_request(self) -> bool:
        return False


class Page:
    """Playwright's Page as the settler uses it: its events, its URL, whether it is closed."""

    def __init__(self) -> None:
        self.url, self.main_frame = f"{APP}/profile", object()
        self._on: dict[str, Callable[[Any], None]] = {}

    def on(self, event: str, handler: Callable[[Any], None]) -> None:
        self._on[event] = handler

    def is_closed(self) -> bool:
        return False

    def request(self, request: Request) -> None:
        self._on["request"](request)

    def answer(self, request: Request) -> None:
        self._on["response"](SimpleNamespace(request=request))


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    clock = Clock()
    monkeypatch.setattr(settle, "_now", lambda: clock.now)
    monkeypatch.setattr(settle, "asyncio", SimpleNamespace(sleep=clock.sleep))
    return clock


def watched(page: Page) -> PageSettler:
    settler = PageSettler()
    settler.attach(SimpleNamespace(on=lambda event, handler: None, pages=[page]))
    return settler


def test_the_settle_line_says_how_long_for_what_and_where_the_page_went() -> None:
    here, login = f"{APP}/dashboard", f"{APP}/login"
    assert Settled(Settling.SETTLED, 3.14, ["POST /api/save"], here, here).line() == "waited 3.1 s for POST /api/save"
    assert Settled(Settling.SETTLED, 0.0, from_url=here, to_url=here).line() == "the page was quiet"
    assert Settled(Settling.SETTLED, 0.5, from_url=here, to_url=here).line() == "waited 0.5 s for the page to stay quiet"
    assert (
        Settled(Settling.SETTLED, 0.0, from_url=here, to_url=here, polls=["GET /api/tick"]).line()
        == "the page was quiet apart from its polls (GET /api/tick)"
    )
    assert (
        Settled(Settling.BOUND_REACHED, 5.0, ["the page's content to render"], here, here, rendered=False).line()
        == "waited 5.0 s for the page's content to render and judged the page as it was at the bound: its content "
        "never rendered"
    )
    assert (
        Settled(Settling.BOUND_REACHED, 5.0, ["the page's drawing"], here, here, rendered=True, restless=True).line()
        == "waited 5.0 s for the page's drawing and judged the page as it was at the bound: it never stopped changing"
    )
    assert (
        Settled(Settling.BOUND_REACHED, 5.0, ["GET /api/poll", "GET /api/feed"], here, here).line()
        == "waited 5.0 s for GET /api/poll, GET /api/feed and judged the page as it was at the bound"
    )
    bounced = Settled(Settling.SETTLED, 3.2, [f"navigation to {login}"], here, login, moved=True)
    assert bounced.line() == f"waited 3.2 s for navigation to {login}; the page moved to {login}"
    assert bounced.detail().model_dump() == {
        "outcome": "settled",
        "waited_s": 3.2,
        "waited_for": [f"navigation to {login}"],
        "from_url": here,
        "to_url": login,
        "moved": True,
        "polls": [],
        "rendered": None,
        "busy": [],
        "summary": bounced.line(),
    }


def test_waited_s_is_the_time_until_the_request_was_answered_and_the_page_stayed_quiet(clock: Clock) -> None:
    page = Page()
    settler = watched(page)
    save = Request("POST", "/api/save?token=s3cret")
    page.request(save)
    clock.at(3.1, lambda: page.answer(save))
    settled = asyncio.run(settler.settle(page, bound_s=15.0))
    assert settled.outcome is Settling.SETTLED
    assert settled.waited_s == pytest.approx(3.1 + 0.5, abs=settle.LOOK_S)  # the answer, then the quiet window
    assert settled.line() == "waited 3.6 s for POST /api/save"  # never the query string


def test_a_page_quiet_before_the_settle_costs_nothing_whatever_the_bound(clock: Clock) -> None:
    page = Page()
    settler = watched(page)
    clock.now = 10.0  # the agent's steps took a while; the page loaded at 0 and did nothing since
    settled = asyncio.run(settler.settle(page, bound_s=5.0))
    assert (settled.outcome, settled.waited_s, settled.line()) == (Settling.SETTLED, 0.0, "the page was quiet")


def test_a_page_that_polls_forever_settles_once_its_poll_answered_and_says_so(clock: Clock) -> None:
    page = Page()
    settler = watched(page)

    def poll(at: float) -> None:  # every 0.5 s a poll that takes 0.7 s: always one in flight
        request = Request("GET", "/api/poll")
        page.request(request)
        clock.at(at + 0.7, lambda: page.answer(request))
        clock.at(at + 0.5, lambda: poll(at + 0.5))

    poll(0.0)
    settled = asyncio.run(settler.settle(page, bound_s=5.0))
    assert settled.outcome is Settling.SETTLED  # at its third request, its first answered: the rest is polling
    assert settled.waited_s == pytest.approx(1.0, abs=settle.LOOK_S)
    assert settled.polls == ["GET /api/poll"]
    assert settled.line() == "waited 1.0 s for GET /api/poll; the page was quiet apart from its polls (GET /api/poll)"


def test_a_page_that_waits_on_nothing_is_looked_at_when_its_quiet_window_could_end_not_every_moment(
    clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    page = Page()
    settler = watched(page)
    looks: list[float] = []

    async def look(_: object) -> None:
        looks.append(clock.now)

    monkeypatch.setattr(settler, "look", look)
    settler.acted()  # an action at 0: the page then does nothing
    clock.now = 0.1
    settled = asyncio.run(settler.settle(page, bound_s=5.0))
    assert settled.outcome is Settling.SETTLED and settled.waited_s == pytest.approx(0.4)
    assert looks == pytest.approx([0.1, 0.5])  # at the start, and as the window ended: not every LOOK_S
