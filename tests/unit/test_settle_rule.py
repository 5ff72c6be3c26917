"""The settle rule's bookkeeping (agent/page/quiet.py): what keeps a page busy, the quiet window, the bound, and what
the report says settling waited for; on a clock the test drives, no browser."""

from __future__ import annotations

from preview_qa.agent.dialogs import Answer, answer_for
from preview_qa.agent.page.quiet import QuietRule, Settling

BOUND = 5.0


def test_a_page_quiet_for_the_window_is_settled_at_once() -> None:
    rule = QuietRule(quiet_s=0.5, last_activity=0.0)
    assert rule.state(now=2.0, since=2.0, bound_s=BOUND) is Settling.SETTLED


def test_a_request_just_answered_keeps_the_page_busy_for_the_quiet_window() -> None:
    rule = QuietRule(quiet_s=0.5)
    rule.started("r1", "POST /api/save", "fetch", now=1.0)
    rule.finished("r1", now=1.2)
    assert rule.state(now=1.5, since=1.0, bound_s=BOUND) is Settling.BUSY
    assert abs(rule.next_look(now=1.5, since=1.0, bound_s=BOUND) - 0.2) < 1e-9
    assert rule.state(now=1.7, since=1.0, bound_s=BOUND) is Settling.SETTLED


def test_a_request_in_flight_keeps_it_busy_until_the_bound_and_is_named() -> None:
    rule = QuietRule(quiet_s=0.5)
    rule.started("r1", "POST /api/save", "xhr", now=0.5)
    rule.note_waits(now=3.1, since=0.0)
    assert rule.state(now=3.1, since=0.0, bound_s=BOUND) is Settling.BUSY
    assert rule.state(now=5.0, since=0.0, bound_s=BOUND) is Settling.BOUND_REACHED
    assert rule.longest_waits() == ["POST /api/save"]


def test_websockets_eventsources_and_static_files_never_count() -> None:
    rule = QuietRule(quiet_s=0.5)
    for i, kind in enumerate(("websocket", "eventsource", "image", "script", "stylesheet", "font")):
        rule.started(i, f"GET /{kind}", kind, now=0.0)
    assert rule.in_flight == {}
    assert rule.state(now=1.0, since=1.0, bound_s=BOUND) is Settling.SETTLED


def test_a_navigation_is_pending_until_its_document_has_loaded() -> None:
    rule = QuietRule(quiet_s=0.5)
    rule.navigating("http://app/login", now=1.0)
    assert rule.state(now=4.0, since=1.0, bound_s=BOUND) is Settling.BUSY
    rule.note_waits(now=4.0, since=1.0)
    rule.loaded(now=4.0)
    assert rule.state(now=4.2, since=1.0, bound_s=BOUND) is Settling.BUSY  # the new page's quiet window
    assert rule.state(now=4.5, since=1.0, bound_s=BOUND) is Settling.SETTLED
    assert rule.longest_waits() == ["navigation to http://app/login"] and rule.moved


def test_waiting_on_a_new_document_means_the_page_moved_and_a_fetch_does_not() -> None:
    rule = QuietRule()
    rule.started("f", "POST /api/save", "fetch", now=0.0)
    rule.note_waits(now=1.0, since=0.0)
    assert not rule.moved
    rule.started("d", "GET /login", "document", now=1.0)
    rule.note_waits(now=1.5, since=0.0)
    assert rule.moved


def test_a_page_polling_forever_costs_the_bound_at_most() -> None:
    rule = QuietRule(quiet_s=0.5)
    now, since = 0.0, 0.0
    while rule.state(now, since, BOUND) is Settling.BUSY or now == 0.0:
        rule.started(now, "GET /api/poll", "fetch", now)
        rule.finished(now, now + 0.05)
        now += 0.5  # the next poll, as the quiet window would end
    assert rule.state(now, since, BOUND) is Settling.BOUND_REACHED and now <= BOUND + 0.5


def test_the_longest_waits_come_first_and_each_once() -> None:
    rule = QuietRule()
    rule.started("a", "GET /api/slow", "fetch", now=0.0)
    rule.started("b", "GET /api/quick", "fetch", now=1.5)
    rule.note_waits(now=2.0, since=0.0)
    rule.finished("b", now=2.0)
    rule.note_waits(now=3.0, since=0.0)
    assert rule.longest_waits() == ["GET /api/slow", "GET /api/quick"]


def test_an_unknown_request_finishing_changes_nothing() -> None:
    rule = QuietRule(last_activity=0.0)
    rule.finished("never started", now=9.0)
    assert rule.last_activity == 0.0


def test_dialogs_are_answered_one_way() -> None:
    assert [answer_for(t, None) for t in ("alert", "confirm", "beforeunload", "prompt")] == [
        Answer.OK,
        Answer.OK,
        Answer.LEAVE,
        Answer.CANCEL,
    ]
    assert answer_for("prompt", "Ada") is Answer.TEXT
