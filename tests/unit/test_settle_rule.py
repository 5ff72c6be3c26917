"""The settle rule's bookkeeping (agent/page/quiet.py): what keeps a page busy, the quiet window, the bound, and what
the report says settling waited for; on a clock the test drives, no browser."""

from __future__ import annotations

from preview_qa.agent.evidence.dialogs import Answer, answer_for
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


def poll(rule: QuietRule, start: float, answer: float, path: str = "/api/tick", body: str = "") -> None:
    key = f"{path} {start}"
    rule.started(key, f"GET {path}", "fetch", now=start, repeat=f"GET {path} {body}")
    rule.finished(key, now=answer)


def test_a_request_repeated_on_a_timer_is_a_poll_and_holds_the_page_no_longer_than_one_answer() -> None:
    rule = QuietRule(quiet_s=0.5)
    for start in (0.0, 0.3, 0.6):  # answered 0.7 s later: always one in flight
        rule.started(start, "GET /api/tick", "fetch", now=start, repeat="GET /api/tick")
    assert rule.state(now=0.65, since=0.0, bound_s=BOUND) is Settling.BUSY  # no answer yet since the last action
    rule.finished(0.0, now=0.7)
    rule.started(0.9, "GET /api/tick", "fetch", now=0.9, repeat="GET /api/tick")
    assert rule.waiting_on() == []
    assert rule.state(now=0.9, since=0.0, bound_s=BOUND) is Settling.SETTLED  # its requests were its own activity
    rule.note_waits(now=0.9, since=0.0)
    assert rule.polls_seen == {"GET /api/tick"}


def test_after_an_action_a_poll_is_waited_for_once_more_then_no_longer() -> None:
    rule = QuietRule(quiet_s=0.5)
    for start in (0.0, 0.5, 1.0):
        poll(rule, start, start + 0.2)
    rule.acted(now=1.3)
    rule.started("next", "GET /api/tick", "fetch", now=1.5, repeat="GET /api/tick ")
    assert rule.waiting_on() == ["GET /api/tick"]  # its answer may carry what the action did
    rule.finished("next", now=1.7)
    rule.started("again", "GET /api/tick", "fetch", now=2.0, repeat="GET /api/tick ")
    assert rule.waiting_on() == []
    assert rule.state(now=2.0, since=1.3, bound_s=BOUND) is Settling.SETTLED  # the action's window is over at 1.8


def test_a_burst_of_one_request_and_a_query_with_different_bodies_are_not_polls() -> None:
    rule = QuietRule(quiet_s=0.5)
    for n in range(5):  # five items fetched at once
        rule.started(f"item{n}", "GET /api/item", "fetch", now=0.0 + n * 0.01, repeat="GET /api/item")
    for n in range(4):  # a GraphQL client: one path, other questions
        rule.started(f"q{n}", "POST /graphql", "fetch", now=n * 0.5, repeat=f"POST /graphql body{n}")
    assert not rule.is_poll("GET /api/item") and not rule.is_poll("POST /graphql body0")
    assert rule.state(now=9.0, since=0.0, bound_s=10.0) is Settling.BUSY
    assert set(rule.waiting_on()) == {"GET /api/item", "POST /graphql"}


def test_a_new_document_counts_its_requests_afresh() -> None:
    rule = QuietRule(quiet_s=0.5)
    for start in (0.0, 0.5, 1.0):
        poll(rule, start, start + 0.1)
    rule.leaving()
    rule.navigating("http://app/next", now=1.2)
    rule.loaded(now=1.3)
    rule.started("first", "GET /api/tick", "fetch", now=1.4, repeat="GET /api/tick ")
    assert rule.waiting_on() == ["GET /api/tick"]


def test_a_change_of_the_dom_keeps_the_page_busy_for_the_quiet_window_unless_a_poll_drew_it() -> None:
    rule = QuietRule(quiet_s=0.5)
    rule.drew(at=1.0)
    assert rule.state(now=1.3, since=1.0, bound_s=BOUND) is Settling.BUSY
    assert rule.state(now=1.5, since=1.0, bound_s=BOUND) is Settling.SETTLED
    for start in (2.0, 2.5, 3.0):
        poll(rule, start, start + 0.1)
        rule.drew(at=start + 0.12)  # the counter the poll's answer updates
    assert rule.state(now=3.2, since=3.0, bound_s=BOUND) is Settling.SETTLED
    rule.drew(at=3.6)  # long after any answer: the page's own
    assert rule.state(now=3.7, since=3.0, bound_s=BOUND) is Settling.BUSY


def test_a_page_that_never_stops_changing_is_judged_at_the_bound_or_its_restless_limit() -> None:
    rule = QuietRule(quiet_s=0.5)
    now = 0.0
    while rule.state(now, since=0.0, bound_s=BOUND) is Settling.BUSY or now == 0.0:
        rule.drew(at=now)  # a clock ticking every 0.1 s, with no request
        now = round(now + 0.1, 1)
    assert rule.state(now, since=0.0, bound_s=BOUND) is Settling.BOUND_REACHED and now == BOUND
    assert rule.waiting_on() == []
    rule.note_waits(now=0.0, since=0.0)  # waiting on nothing from the start
    rule.note_waits(now=BOUND, since=0.0)
    assert rule.longest_waits() == ["the page's drawing"] and rule.waited_on["the page's drawing"] == BOUND


def test_a_page_waiting_on_nothing_that_keeps_changing_is_judged_at_its_restless_limit() -> None:
    rule = QuietRule(quiet_s=0.5)
    rule.started("save", "POST /api/save", "fetch", now=0.0)
    for tick in range(30):  # a clock ticking every 0.1 s, and a save answered at 1.0
        now = tick / 10
        if now == 1.0:
            rule.finished("save", now=now)
        rule.drew(at=now)
        rule.note_waits(now, since=0.0)
        if rule.state(now, since=0.0, bound_s=BOUND, restless_s=1.5) is not Settling.BUSY:
            break
    assert now == 2.5  # 1.5 s after it stopped waiting on the save, not after the settle began
    assert rule.state(now, since=0.0, bound_s=BOUND, restless_s=1.5) is Settling.BOUND_REACHED


def test_a_page_fetching_its_widgets_code_between_two_looks_is_not_restless() -> None:
    """Streamlit on a busy machine: the socket's messages are all in, then the page fetches each widget's script (0.3 s
    apart, each between two looks) and draws. It was cut at 1.5 s as a ticking clock, and a first step saw the title
    without the widgets."""
    rule = QuietRule(quiet_s=0.5)
    rule.loaded(now=0.0)
    now = 0.0
    for n in range(10):  # from 0.0 to 3.0 s: a chunk fetched, then drawn, the looks never seeing it in flight
        now = round(n * 0.3, 1)
        rule.started(f"chunk{n}", f"GET /static/js/Widget{n}.js", "script", now=now)
        rule.finished(f"chunk{n}", now=now + 0.05)
        rule.drew(at=now + 0.1)
        rule.note_waits(now + 0.2, since=0.0)
        assert rule.state(now + 0.2, since=0.0, bound_s=BOUND, restless_s=1.5) is Settling.BUSY, now
    rule.note_waits(3.4, since=0.0)
    assert rule.state(3.4, since=0.0, bound_s=BOUND, restless_s=1.5) is Settling.SETTLED  # the last draw at 2.8


def test_what_a_new_sessions_page_fetches_and_draws_has_the_sessions_window() -> None:
    """Streamlit on a busy machine: the socket's messages are in by 0.2 s, a widget's code arrives at 1.0 s and is
    compiled and drawn 0.6 s later. With the usual 0.5 s window the page was judged at 1.5 s, before the widget."""
    rule = QuietRule(quiet_s=0.5)
    rule.acted(now=0.0)
    rule.loaded(now=0.05)
    rule.socket_opened("stream", "/_stcore/stream", now=0.1)
    rule.socket_message("stream", now=0.2)
    rule.started("chunk", "GET /static/js/Button.js", "script", now=0.9)
    rule.finished("chunk", now=1.0)
    assert rule.state(1.6, since=0.0, bound_s=BOUND) is Settling.BUSY  # settled here before: the widget not drawn yet
    rule.drew(at=1.6)
    assert rule.state(4.5, since=0.0, bound_s=BOUND) is Settling.BUSY
    assert rule.state(4.6, since=0.0, bound_s=BOUND) is Settling.SETTLED
    rule.acted(now=5.0)  # after an action, on the socket opened before it: the usual window
    rule.started("save", "POST /api/save", "fetch", now=5.1)
    rule.finished("save", now=5.2)
    assert rule.state(5.7, since=5.0, bound_s=BOUND) is Settling.SETTLED


def test_a_page_sitting_out_a_new_sessions_quiet_window_is_not_restless() -> None:
    rule = QuietRule(quiet_s=0.5)
    rule.acted(now=0.0)
    rule.socket_opened("stream", "/_stcore/stream", now=0.1)
    rule.socket_message("stream", now=0.2)  # the title; the widgets may come after the server's pause
    for now in (0.3, 1.0, 2.0, 3.1):
        rule.note_waits(now, since=0.0)
        assert rule.state(now, since=0.0, bound_s=BOUND, restless_s=1.5) is Settling.BUSY
    rule.note_waits(3.2, since=0.0)
    assert rule.state(3.2, since=0.0, bound_s=BOUND, restless_s=1.5) is Settling.SETTLED


def test_a_websocket_opened_since_the_last_action_is_pending_until_its_first_message() -> None:
    rule = QuietRule(quiet_s=0.5)
    rule.socket_opened("old", "/live", now=0.5)
    rule.acted(now=1.0)
    rule.socket_opened("new", "/_stcore/stream", now=1.2)
    assert rule.waiting_on() == ["WebSocket /_stcore/stream"]  # the one from before the action is not waited for
    assert rule.state(now=4.0, since=1.0, bound_s=BOUND) is Settling.BUSY
    rule.socket_message("new", now=4.0)
    assert rule.state(now=6.9, since=1.0, bound_s=10.0) is Settling.BUSY  # a new session's server may pause mid-stream
    assert rule.state(now=7.0, since=1.0, bound_s=10.0) is Settling.SETTLED
    rule.socket_message("old", now=8.0)  # a message on the socket from before the action: the usual window
    assert rule.state(now=8.5, since=1.0, bound_s=10.0) is Settling.SETTLED
    rule.acted(now=9.0)
    rule.socket_opened("closed", "/chat", now=9.1)
    rule.socket_closed("closed", now=9.2)
    assert rule.waiting_on() == []


def test_a_page_whose_content_has_not_rendered_is_busy_until_the_bound() -> None:
    rule = QuietRule(quiet_s=0.5)
    rule.content(shown=False)
    assert rule.state(now=2.0, since=0.0, bound_s=BOUND) is Settling.BUSY
    assert rule.waiting_on() == ["the page's content to render"]
    assert rule.state(now=BOUND, since=0.0, bound_s=BOUND, restless_s=1.5) is Settling.BOUND_REACHED
    rule.content(shown=True)
    assert rule.state(now=2.0, since=0.0, bound_s=BOUND) is Settling.SETTLED


def test_a_script_fetched_after_the_load_is_code_the_app_draws_with() -> None:
    rule = QuietRule(quiet_s=0.5)
    rule.started("early", "GET /app.js", "script", now=0.0)
    rule.loaded(now=0.5)
    rule.started("chunk", "GET /Button.js", "script", now=1.0)
    assert rule.waiting_on() == ["GET /Button.js"]


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


def test_a_page_waiting_on_nothing_is_idle_until_its_window_ends_and_one_waiting_on_a_request_is_not() -> None:
    """What lets settling look again only when the quiet window could have ended (agent/page/settle.py), not every 50
    ms: waiting on nothing, only time (or the bound, or the restless limit) can settle the page."""
    rule = QuietRule(quiet_s=0.5, last_activity=1.0)
    assert abs((rule.idle_for(now=1.1, since=1.1, bound_s=BOUND) or 0) - 0.4) < 1e-9
    assert abs((rule.idle_for(now=1.1, since=1.1, bound_s=0.2) or 0) - 0.2) < 1e-9  # the bound comes first
    rule.started("r1", "GET /api/items", "fetch", now=1.2)
    assert rule.idle_for(now=1.3, since=1.1, bound_s=BOUND) is None  # an answer may come any moment: look often
    rule.finished("r1", now=1.4)
    assert abs((rule.idle_for(now=1.4, since=1.1, bound_s=BOUND) or 0) - 0.5) < 1e-9
    rule.drew(at=1.8)  # what it draws meanwhile puts the window off, seen at the next look
    rule.note_waits(now=2.0, since=1.1)  # free since 2.0: a page that keeps changing is judged 1.5 s later at most
    assert abs((rule.idle_for(now=2.0, since=1.1, bound_s=BOUND, restless_s=0.2) or 0) - 0.2) < 1e-9
