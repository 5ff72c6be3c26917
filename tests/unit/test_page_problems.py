"""expect.console_errors, expect.requests and expect.links decided without a browser (verdict/checks/problems.py), the
links a page's check requests (agent/evidence/links.py's choice), the problems a result keeps, and the manifest's
rules for the three keys (#68, 4)."""

from __future__ import annotations

import pytest

from preview_qa.agent.evidence.links import LINKS_CHECKED, same_origin_links
from preview_qa.errors import ManifestError
from preview_qa.manifest.loader import loads
from preview_qa.manifest.models import Expectations, RequestsCheck
from preview_qa.results import PageProblem, ProblemKind
from preview_qa.verdict.agent_run import AgentRun, LinkAnswer
from preview_qa.verdict.checks.problems import (
    PROBLEMS_KEPT,
    console_outcome,
    kept_problems,
    links_outcome,
    problem_outcomes,
    requests_outcome,
)

ORIGIN = "http://app.test"


def request(path: str, status: int | None = 404, kind: str = "image", method: str = "GET") -> PageProblem:
    what = f"answered {status}" if status else "failed: net::ERR_CONNECTION_RESET"
    return PageProblem(
        kind=ProblemKind.BROKEN_IMAGE if kind == "image" else ProblemKind.HTTP_ERROR,
        page="/products",
        target=path,
        status=status,
        message=f"{method} {path} {what} ({kind})",
        resource_type=kind,
    )


def message(kind: ProblemKind, text: str, page: str = "/cart") -> PageProblem:
    return PageProblem(kind=kind, page=page, message=text)


def test_console_errors_fail_naming_the_first_three_each_with_its_page() -> None:
    seen = [
        message(ProblemKind.PAGE_ERROR, "TypeError: x is undefined"),
        *(message(ProblemKind.CONSOLE_ERROR, f"error {n}", "/help") for n in range(4)),
        request("/img/a.png"),  # a request's problem is expect.requests'
    ]
    outcome = console_outcome(seen)
    assert not outcome.ok
    assert outcome.found == (
        "5: uncaught 'TypeError: x is undefined' on /cart; console error 'error 0' on /help; console error 'error 1' on "
        "/help; and 2 more"
    )
    assert console_outcome([request("/img/a.png")]).found == "none" and console_outcome([]).ok


def test_problems_past_the_evidence_bound_fail_closed() -> None:
    assert not console_outcome([], dropped=3).ok
    assert console_outcome([], dropped=3).found == "3 (too many to keep)"
    assert not requests_outcome(RequestsCheck(allow=["/*"]), [request("/a.png")], dropped=1).ok


def test_requests_fail_on_each_failed_request_once_with_its_count_unless_allowed() -> None:
    seen = [request("/img/x.png"), request("/api/poll", 500, "fetch"), request("/api/poll", 500, "fetch")]
    seen.append(request("/api/metrics/1", None, "xhr", "POST"))
    outcome = requests_outcome(RequestsCheck(), seen)
    assert outcome.check == "requests" and not outcome.ok
    assert outcome.found == (
        "3: GET /img/x.png answered 404 (image); GET /api/poll answered 500 (fetch) (2 times); POST /api/metrics/1 "
        "failed: net::ERR_CONNECTION_RESET (xhr)"
    )
    allowed = requests_outcome(RequestsCheck(allow=["/api/*", "/img/x.png"]), seen)
    assert (allowed.ok, allowed.found) == (True, "none (4 allowed, not counted)")
    assert not requests_outcome(RequestsCheck(allow=["/api/*"]), seen).ok  # '*' spans '/'; the image is not allowed


def test_links_fail_on_a_status_of_400_or_above_and_on_no_answer() -> None:
    answers = [
        LinkAnswer("/", "Home", status=200),
        LinkAnswer("/team", "Team", status=404),
        LinkAnswer("/moved", "Old", status=302),  # a redirect off the origin is its answer
        LinkAnswer("/slow?x=1", "", failure="did not answer within 10 s"),
    ]
    outcome = links_outcome(answers)
    assert not outcome.ok
    assert outcome.expected == "no broken link among the final page's 4 link(s) to the app's own pages"
    assert outcome.found == "2: link 'Team' to /team answered 404; a link without text to /slow?x=1 did not answer within 10 s"
    assert links_outcome(answers[:1]).ok and links_outcome([]).ok
    assert (links_outcome(None).ok, links_outcome(None).found) == (False, "the links were not requested")


def test_only_the_checks_a_test_declares_are_judged() -> None:
    seen = [message(ProblemKind.CONSOLE_ERROR, "boom")]
    assert problem_outcomes(Expectations(), seen, {}, None) == []
    both = Expectations.model_validate({"console_errors": "none", "links": {"broken": "none"}})
    assert [(o.check, o.ok) for o in problem_outcomes(both, seen, {}, [])] == [("console_errors", False), ("links", True)]


def test_a_result_keeps_fifty_problems_its_broken_links_by_path_and_counts_the_rest() -> None:
    run = AgentRun(final_url="http://app.test/about?tab=1", problems=[request(f"/{n}.png") for n in range(PROBLEMS_KEPT)])
    run.links = [LinkAnswer("/team?ref=nav", "Team", status=404), LinkAnswer("/", "Home", status=200)]
    run.problems_dropped = {ProblemKind.BROKEN_IMAGE: 7}
    kept, left_off = kept_problems(run)
    assert len(kept) == PROBLEMS_KEPT and left_off == 1 + 7
    alone, none_left = kept_problems(AgentRun(final_url="http://app.test/about?tab=1", links=run.links))
    assert none_left == 0
    assert [(p.kind, p.page, p.target, p.status, p.message) for p in alone] == [
        (ProblemKind.BROKEN_LINK, "/about", "/team", 404, "link 'Team' to /team answered 404")
    ]


def test_the_links_requested_are_the_distinct_same_origin_ones_without_sign_out_or_in_page_links() -> None:
    found = [
        {"href": f"{ORIGIN}/team", "text": "Team"},
        {"href": f"{ORIGIN}/team#people", "text": "Team again"},
        {"href": f"{ORIGIN}/about?tab=1", "text": "  About\n us "},
        {"href": "http://elsewhere.test/team", "text": "Partner"},
        {"href": "mailto:a@b.test", "text": "Mail"},
        {"href": f"{ORIGIN}/users/sign_out", "text": "Me"},
        {"href": f"{ORIGIN}/account", "text": "Log out"},
        {"href": f"{ORIGIN}/here#top", "text": "Top"},
        {"href": f"{ORIGIN}/logs/outbox", "text": "Outbox"},
    ]
    assert same_origin_links(found, ORIGIN, f"{ORIGIN}/here") == [
        ("/team", "Team"),
        ("/about?tab=1", "About us"),
        ("/logs/outbox", "Outbox"),
    ]
    many = [{"href": f"{ORIGIN}/p{n}", "text": ""} for n in range(LINKS_CHECKED + 5)]
    assert len(same_origin_links(many, ORIGIN, ORIGIN)) == LINKS_CHECKED


@pytest.mark.parametrize("key", ["console_errors: none", "requests: {failed: none}", "links: {broken: none}"])
def test_a_steps_expect_refuses_the_problem_checks(key: str) -> None:
    with pytest.raises(ManifestError, match="judged after the last step"):
        loads(f"version: 1\ntests:\n  - name: t\n    steps:\n      - open: /\n        expect: {{{key}}}\n")


@pytest.mark.parametrize(
    "expect", ["{console_errors: some}", "{requests: {failed: all}}", "{links: {broken: any}}", "{requests: {allow: /x}}"]
)
def test_only_none_is_a_value_of_the_problem_checks(expect: str) -> None:
    with pytest.raises(ManifestError):
        loads(f"version: 1\ntests:\n  - name: t\n    task: Look.\n    expect: {expect}\n")
