"""The settle rule's wait for the answer to an action's WebSocket message (agent/page/quiet.py): which messages ask, what
answers them (a message back that the page draws, or whatever came back within the follow window), what never asks (a
reply, a ticker, a session's socket, the page's own messages once a settle has judged the action); on a clock the test
drives, no browser."""

from __future__ import annotations

from preview_qa.agent.page.quiet import ANSWER_FOLLOW_S, QuietRule, Settling

BOUND = 5.0
WAIT = ["the answer on WebSocket /ws"]


def clicked(opened: float = 0.5, acted: float = 1.0, sent: float = 1.1) -> QuietRule:
    """A page whose socket /ws opened at `opened`, acted on at `acted`, which sent the action's message at `sent`."""
    rule = QuietRule(quiet_s=0.5)
    rule.socket_opened("ws", "/ws", now=opened)
    rule.acted(now=acted)
    rule.socket_sent("ws", now=sent)
    return rule


def test_the_actions_message_is_waited_on_until_its_answer_is_drawn_then_the_quiet_window() -> None:
    rule = clicked()
    assert rule.waiting_on(now=1.5) == WAIT
    assert rule.state(now=2.0, since=1.2, bound_s=BOUND) is Settling.BUSY
    rule.note_waits(now=2.0, since=1.2)
    rule.socket_message("ws", now=2.1)
    rule.drew(at=2.12)
    assert rule.waiting_on(now=2.2) == []
    assert rule.state(now=2.5, since=1.2, bound_s=BOUND) is Settling.BUSY  # the answer's drawing: the quiet window
    assert rule.state(now=2.63, since=1.2, bound_s=BOUND) is Settling.SETTLED
    rule.note_waits(now=2.63, since=1.2)
    assert rule.longest_waits() == WAIT


def test_a_drawing_seen_before_its_message_is_heard_of_answers_it_too() -> None:
    rule = clicked()
    rule.drew(at=2.0)  # Playwright tells of the frame after the page drew it
    assert rule.waiting_on(now=2.1) == WAIT
    rule.socket_message("ws", now=2.2)
    assert rule.waiting_on(now=2.2) == []


def test_a_drawing_from_before_the_message_is_not_its_answer() -> None:
    rule = clicked()
    rule.drew(at=1.05)  # the click's own change (a pressed style), before the message went
    rule.socket_message("ws", now=1.2)  # an acknowledgement
    assert rule.waiting_on(now=1.3) == WAIT


def test_after_an_acknowledgement_that_draws_nothing_the_answer_has_the_follow_window() -> None:
    rule = clicked()
    rule.socket_message("ws", now=1.2)  # Panel's OK: nothing to draw
    assert rule.waiting_on(now=1.2 + ANSWER_FOLLOW_S - 0.01) == WAIT
    rule.socket_message("ws", now=2.1)  # its patch, drawn where no look sees (a shadow root, a canvas)
    assert rule.state(now=2.65, since=1.2, bound_s=BOUND) is Settling.BUSY  # still inside the follow window
    assert rule.waiting_on(now=1.2 + ANSWER_FOLLOW_S) == []
    assert rule.state(now=1.2 + ANSWER_FOLLOW_S, since=1.2, bound_s=BOUND) is Settling.SETTLED


def test_an_unanswered_message_holds_the_settle_to_its_bound_once_and_is_then_given_up() -> None:
    rule = clicked()
    rule.start_settle()
    assert rule.state(now=1.2 + BOUND, since=1.2, bound_s=BOUND) is Settling.BOUND_REACHED
    rule.note_waits(now=1.2 + BOUND, since=1.2)
    assert rule.longest_waits() == WAIT
    rule.end_settle()  # the next settle (the final page's, after `done`) does not wait for it again
    assert rule.waiting_on(now=7.0) == []
    rule.socket_sent("ws", now=8.0)  # a heartbeat while the agent thinks: the page's own, not the action's
    assert rule.waiting_on(now=8.0) == []
    rule.acted(now=9.0)
    rule.socket_sent("ws", now=9.1)
    assert rule.waiting_on(now=9.1) == WAIT


def test_a_message_replying_to_one_just_received_asks_nothing() -> None:
    rule = clicked()
    rule.socket_message("ws", now=1.3)
    rule.drew(at=1.3)  # the answer, drawn
    rule.socket_sent("ws", now=1.35)  # Blazor's acknowledgement of the render it just drew
    assert rule.waiting_on(now=1.4) == []


def test_a_ticker_acknowledged_tick_by_tick_never_holds_the_page() -> None:
    rule = QuietRule(quiet_s=0.5)
    rule.socket_opened("prices", "/prices", now=0.0)
    rule.acted(now=1.0)
    for tick in (1.5, 3.0, 4.5):
        rule.socket_message("prices", now=tick)
        rule.drew(at=tick + 0.01)
        rule.socket_sent("prices", now=tick + 0.02)  # "ack"
        assert rule.waiting_on(now=tick + 0.1) == []
    assert rule.state(now=5.1, since=1.2, bound_s=BOUND) is Settling.SETTLED


def test_messages_sent_before_any_action_or_on_a_socket_opened_since_ask_nothing() -> None:
    rule = QuietRule(quiet_s=0.5)
    rule.socket_opened("ws", "/ws", now=0.5)
    rule.socket_message("ws", now=0.55)
    rule.socket_sent("ws", now=0.9)  # the page's own start (Bokeh's pull of its document)
    assert rule.waiting_on(now=0.9) == []
    rule.acted(now=1.0)
    rule.socket_opened("new", "/_stcore/stream", now=1.2)
    rule.socket_sent("new", now=1.3)  # a new session's socket: waited on until its first message, as before
    assert rule.waiting_on(now=1.4) == ["WebSocket /_stcore/stream"]


def test_a_socket_closed_is_no_longer_waited_on() -> None:
    rule = clicked()
    rule.socket_closed("ws", now=1.5)
    assert rule.waiting_on(now=1.6) == []
