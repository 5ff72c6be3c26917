"""verdict/findings.py without a browser: one fault seen on both sides matches whatever ids and counts its message
holds; what only the preview shows is new; a repro confirms a finding only by failing on the preview for its own check
and passing on the baseline. And explore/pages.py's reading of links and sitemaps."""

from __future__ import annotations

import pytest

from preview_qa.explore.pages import links_in, page_of
from preview_qa.results import (
    AccessibilityViolation,
    ExpectationOutcome,
    FindingKind,
    PageProblem,
    ProblemKind,
    Status,
    StepResult,
    StepStatus,
    TestResult,
    ViolatingElement,
)
from preview_qa.verdict.findings import Seen, beside_old, compared, confirmation, fold, repro, seen_on


def result(*problems: PageProblem, status: Status = Status.PASSED, checks: list[ExpectationOutcome] | None = None) -> TestResult:
    return TestResult(
        name="sweep /team",
        file="sweeps.yml",
        line=1,
        status=status,
        reason="r",
        problems=list(problems),
        expectations=checks or [],
    )


def console(message: str) -> PageProblem:
    return PageProblem(kind=ProblemKind.CONSOLE_ERROR, page="/team", message=message)


def test_one_fault_matches_on_both_sides_whatever_its_ids_and_times() -> None:
    pr = seen_on("/team", result(console("roster failed (request id d6f2ceef-5e62-4b4b-b9f1-a965d56819d3, after 153 ms)")))
    main = seen_on("/team", result(console("roster failed (request id 0a1b2c3d-0000-4b4b-8888-a965d56819ff, after 9 ms)")))
    assert [there for _, there in compared(pr, main)] == [True]
    assert fold("order 1042 of 3 at 5f3a9c1e") == "order # of # at #"


def test_what_only_the_preview_shows_is_new() -> None:
    failed = PageProblem(
        kind=ProblemKind.HTTP_ERROR, page="/orders", target="/api/orders", status=500, message="GET /api/orders answered 500"
    )
    pr, main = seen_on("/orders", result(failed)), seen_on("/orders", result())
    assert [(s.kind, there) for s, there in compared(pr, main)] == [(FindingKind.HTTP_ERROR, False)]
    other = failed.model_copy(update={"status": 404})  # the same request answering another status is another fault
    assert [there for _, there in compared(pr, seen_on("/orders", result(other)))] == [False]


def test_only_counted_axe_violations_are_seen_by_rule_and_element() -> None:
    label = AccessibilityViolation(rule="label", impact="critical", help="h", elements=[ViolatingElement(target="#email")])
    minor = AccessibilityViolation(rule="region", impact="minor", help="h", counted=False)
    outcome = ExpectationOutcome(check="accessibility", expected="e", found="f", ok=False, violations=[label, minor])
    (seen,) = seen_on("/contact", result(checks=[outcome]))
    assert seen.kind is FindingKind.ACCESSIBILITY and seen.key == "accessibility /contact label #email"


ORDERS = Seen(FindingKind.HTTP_ERROR, "/orders", "GET /api/orders answered 500", "http_error /orders /api/orders 500")


def outcome(check: str, ok: bool) -> ExpectationOutcome:
    return ExpectationOutcome(check=check, expected="e", found="f", ok=ok)


@pytest.mark.parametrize(
    ("preview", "baseline", "confirmed", "why"),
    [
        ((Status.FAILED, "requests", False), (Status.PASSED, "requests", True), True, "fails on the preview"),
        ((Status.FAILED, "requests", False), (Status.FAILED, "requests", False), False, "did not pass on the baseline"),
        ((Status.ERRORED, "requests", True), (Status.PASSED, "requests", True), False, "did not fail on the preview"),
        ((Status.FAILED, "url", False), (Status.PASSED, "requests", True), False, "did not fail on the preview for requests"),
    ],
)
def test_a_repro_confirms_only_by_its_own_check_failing_on_the_preview_and_passing_on_the_baseline(
    preview: tuple[Status, str, bool], baseline: tuple[Status, str, bool], confirmed: bool, why: str
) -> None:
    sides = [result(status=s, checks=[outcome(c, ok)]) for s, c, ok in (preview, baseline)]
    ok, reason = confirmation(ORDERS, *sides)
    assert ok is confirmed and why in reason, reason
    assert confirmation(ORDERS, sides[0], None)[0] is False


def test_a_repro_that_stopped_before_its_check_confirms_nothing() -> None:
    """A step that failed (a login wall, an element never there) fails the test too, but not for the finding's
    check: the repro must get through every step first."""
    steps = [
        StepResult(index=1, name="open /orders", kind="open", status=StepStatus.PASSED),
        StepResult(index=2, name="Sign in", kind="do", status=StepStatus.FAILED),
    ]
    preview = result(status=Status.FAILED, checks=[outcome("requests", False)]).model_copy(update={"step_results": steps})
    ok, reason = confirmation(ORDERS, preview, result(checks=[outcome("requests", True)]))
    assert not ok and "did not get through its steps on the preview: step 2 of 2 'Sign in' failed" in reason, reason


def test_a_new_failed_request_beside_old_ones_is_reproduced_with_those_allowed() -> None:
    """Before, its repro (no failed request at all) failed on the baseline too, for the old request: unconfirmed."""
    hero = PageProblem(kind=ProblemKind.HTTP_ERROR, page="/blog", target="/img/hero.png", status=404, message="404")
    api = PageProblem(kind=ProblemKind.HTTP_ERROR, page="/blog", target="/api/posts", status=500, message="500")
    old = seen_on("/blog", result(hero))
    ((new, _),) = [(s, t) for s, t in compared(seen_on("/blog", result(hero, api)), old) if not t]
    assert beside_old(new, old).repro["expect"] == {"requests": {"failed": "none", "allow": ["/img/hero.png"]}}
    assert beside_old(new, []).repro == repro(FindingKind.HTTP_ERROR, "/blog")  # nothing old: the plain repro


def test_a_repro_is_an_ordinary_test_of_exact_steps() -> None:
    assert repro(FindingKind.BROKEN_LINK, "/about") == {
        "name": "/about has no broken link",
        "steps": [{"open": "/about"}],
        "expect": {"links": {"broken": "none"}},
    }


def test_pages_are_the_preview_s_own_documents_once_each() -> None:
    html = '<a href="/a">A</a><a href="b?x=1">B</a><a href="https://other.example/c">C</a><a href="/logo.png">L</a>'
    html += '<a href="/a">A again</a>'
    assert links_in(html, "http://127.0.0.1:8000/docs/", "http://127.0.0.1:8000/") == ["/a", "/docs/b?x=1"]
    assert page_of("http://127.0.0.1:9000/", "http://127.0.0.1:8000/") is None  # another port is another origin
