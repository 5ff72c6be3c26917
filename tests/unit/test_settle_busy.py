"""A page that says it is busy is waited for, never judged (agent/page/quiet.py, agent/page/settle.py's Settled): while a
visible element announces work in progress (aria-busy, a progressbar without a value or whose value still moves) the
page is not settled, whatever its network does; still busy at the bound, the test errors with that cause. On a clock
the test drives, no browser."""

from __future__ import annotations

from preview_qa.agent.page.quiet import Announced, Busy, QuietRule, Settling
from preview_qa.agent.page.settle import Settled

BOUND = 5.0
PAYING = Busy(Announced.INDETERMINATE, "progressbar", "Processing payment…")


def test_a_page_that_says_it_is_busy_is_not_settled_with_nothing_in_flight() -> None:
    rule = QuietRule(quiet_s=0.5)
    rule.announced([PAYING], now=0.0)
    assert rule.state(now=2.5, since=0.0, bound_s=BOUND) is Settling.BUSY  # quiet for 2.5 s, but still at work
    assert rule.waiting_on(2.5) == ["the page to stop saying it was busy (progressbar 'Processing payment…')"]
    assert rule.idle_for(2.5, 0.0, BOUND, restless_s=1.5) is None  # looked at again soon, not cut short as restless
    rule.announced([], now=2.6)  # "Payment declined": its end is a change, then the quiet window
    assert rule.state(now=2.9, since=0.0, bound_s=BOUND) is Settling.BUSY
    assert rule.state(now=3.1, since=0.0, bound_s=BOUND) is Settling.SETTLED


def test_a_page_still_busy_at_the_bound_is_an_error_with_its_cause_never_a_verdict() -> None:
    rule = QuietRule(quiet_s=0.5)
    rule.announced([PAYING, Busy(Announced.BUSY, "<section>", "Results")], now=0.0)
    rule.note_waits(now=10.0, since=0.0)
    assert rule.state(now=10.0, since=0.0, bound_s=10.0) is Settling.BOUND_REACHED
    assert rule.longest_waits()[0] == "the page to stop saying it was busy (progressbar 'Processing payment…')"
    settled = Settled(Settling.BOUND_REACHED, 10.0, busy=list(rule.busy))
    assert settled.busy_error() == (
        "the page still said it was busy after 10 s: progressbar 'Processing payment…', <section> 'Results' "
        '(aria-busy="true"); it is not judged while it does (give the test a larger expect.timeout if its work takes '
        "longer)"
    )
    assert "at the bound the page still said it was busy" in settled.line()
    assert "judged the page" not in settled.line()


def test_a_settled_page_has_no_busy_error() -> None:
    assert Settled(Settling.SETTLED, 3.1, busy=[]).busy_error() is None


def test_each_way_of_announcing_work_is_named_for_the_report() -> None:
    assert Busy(Announced.INDETERMINATE, "<progress>").label() == "<progress>"
    assert Busy(Announced.MOVING, "progressbar", "Upload").label() == "progressbar 'Upload' (its value still changing)"
    long = Busy(Announced.BUSY, "<div>", "x" * 100).label()
    assert long == "<div> '" + "x" * 59 + '…\' (aria-busy="true")'


def test_the_same_announcement_again_is_no_change_of_the_page() -> None:
    rule = QuietRule(quiet_s=0.5)
    rule.announced([PAYING], now=0.0)
    rule.announced([PAYING], now=2.0)
    rule.announced([], now=3.0)
    assert rule.quiet_at() == 3.5  # only its start and its end were changes
