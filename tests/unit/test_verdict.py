"""The verdict without a browser: every fail-closed rule of verdict.decide / parse_report, and check_data's semantics."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError

from preview_qa.manifest.models import TestSpec
from preview_qa.results import EvidenceSummary, Execution, ExpectationOutcome, Status
from preview_qa.verdict.agent_run import AgentRun, DoneReport, JudgeReport, LLMFault, SecretAttempt
from preview_qa.verdict.checks.data_checks import check_data
from preview_qa.verdict.decide import REASON_LIMIT, decide, parse_report
from tests.builders import spec

SCHEMA = {"type": "object", "properties": {"price": {"type": "string"}}, "required": ["price"]}


def done(status: str = "pass", reason: str = "it works", success: bool | None = True, **extra: Any) -> DoneReport:
    return DoneReport(text=json.dumps({"status": status, "reason": reason, **extra}), success=success)


def check(ok: bool, name: str = "url") -> ExpectationOutcome:
    return ExpectationOutcome(check=name, expected="URL containing '/dashboard'", found="http://x/login", ok=ok)


def provider(status: int | None = 500, purpose: str = "agent") -> LLMFault:
    return LLMFault(kind="provider", purpose=purpose, status=status, message="scripted HTTP 500")  # type: ignore[arg-type]


def invalid(purpose: str = "agent") -> LLMFault:
    return LLMFault(kind="invalid_output", purpose=purpose, status=None, message="not valid JSON")  # type: ignore[arg-type]


# (case id, test spec, trace, expected status, expected reason: exact, or a prefix ending in "...")
CASES: list[tuple[str, TestSpec, AgentRun, Status, str]] = [
    ("a valid pass passes", spec(), AgentRun(done=done()), Status.PASSED, "it works"),
    ("a pass with no success flag passes", spec(), AgentRun(done=done(success=None)), Status.PASSED, "it works"),
    ("the agent's fail fails with its reason", spec(), AgentRun(done=done("fail", "no price")), Status.FAILED, "agent: no price"),
    (
        "fail with success=false is consistent",
        spec(),
        AgentRun(done=done("fail", "no", success=False)),
        Status.FAILED,
        "agent: no",
    ),
    (
        "pass with success=false contradicts itself",
        spec(),
        AgentRun(done=done(success=False)),
        Status.FAILED,
        "the agent's report contradicts itself: status 'pass' but success=false",
    ),
    (
        "an empty report fails",
        spec(),
        AgentRun(done=DoneReport(text=None, success=True)),
        Status.FAILED,
        "the agent's final report is empty",
    ),
    (
        "prose instead of JSON fails",
        spec(),
        AgentRun(done=DoneReport(text="It passed!", success=True)),
        Status.FAILED,
        "the agent's final report is not valid JSON",
    ),
    (
        "an unknown status fails",
        spec(),
        AgentRun(done=done("maybe")),
        Status.FAILED,
        "the agent's final report breaks its schema at status: ...",
    ),
    (
        "an empty reason fails",
        spec(),
        AgentRun(done=done(reason="")),
        Status.FAILED,
        "the agent's final report breaks its schema at reason: ...",
    ),
    (
        "a blank reason fails: it names no evidence",
        spec(),
        AgentRun(done=done(reason=" \n ")),
        Status.FAILED,
        "the agent's final report breaks its schema at reason: ...",
    ),
    (
        "an extra field fails",
        spec(),
        AgentRun(done=done(verdict="pass")),
        Status.FAILED,
        "the agent's final report breaks its schema at verdict: ...",
    ),
    (
        "a JSON list fails",
        spec(),
        AgentRun(done=DoneReport(text='["pass"]', success=True)),
        Status.FAILED,
        "the agent's final report breaks its schema at top level: ...",
    ),
    (
        "a status of the wrong type fails",
        spec(),
        AgentRun(done=DoneReport(text='{"status": true, "reason": "x"}', success=True)),
        Status.FAILED,
        "the agent's final report breaks its schema at status: ...",
    ),
    (
        "no data although output_schema is declared",
        spec(output_schema=SCHEMA),
        AgentRun(done=done()),
        Status.FAILED,
        "the agent returned no extracted data although the test declares an output_schema",
    ),
    (
        "data that breaks output_schema",
        spec(output_schema=SCHEMA),
        AgentRun(done=done(data={"price": 19.99})),
        Status.FAILED,
        "the agent's extracted data breaks output_schema at price: 19.99 is not of type 'string'",
    ),
    (
        "data missing a required key",
        spec(output_schema=SCHEMA),
        AgentRun(done=done(data={})),
        Status.FAILED,
        "the agent's extracted data breaks output_schema at top level: 'price' is a required property",
    ),
    ("valid data passes", spec(output_schema=SCHEMA), AgentRun(done=done(data={"price": "$19.99"})), Status.PASSED, "it works"),
    (
        "a failed page check overrules the agent's pass",
        spec(),
        AgentRun(done=done(), expectations=[check(False)]),
        Status.FAILED,
        "expectation url failed: expected URL containing '/dashboard', found http://x/login",
    ),
    ("passing page checks keep the pass", spec(), AgentRun(done=done(), expectations=[check(True)]), Status.PASSED, "it works"),
    (
        "a wrong extracted value overrules the agent's pass",
        spec(expect={"data": {"price": "$19.99"}}),
        AgentRun(done=done(data={"price": "$29.99"})),
        Status.FAILED,
        'expectation data.price failed: expected "$19.99", found "$29.99"',
    ),
    (
        "a data check with no data at all",
        spec(expect={"data": {"price": "$19.99"}}),
        AgentRun(done=done()),
        Status.FAILED,
        'expectation data.price failed: expected "$19.99", found no such key',
    ),
    (
        "the agent's fail wins over passing checks",
        spec(),
        AgentRun(done=done("fail", "broken"), expectations=[check(True)]),
        Status.FAILED,
        "agent: broken",
    ),
    (
        "an infrastructure error outranks a valid pass",
        spec(),
        AgentRun(done=done(), infrastructure_error="timed out after 5 s"),
        Status.ERRORED,
        "timed out after 5 s",
    ),
    ("no done action, no faults", spec(), AgentRun(), Status.FAILED, "the agent stopped without reporting a verdict"),
    (
        "no done action because the provider failed",
        spec(),
        AgentRun(llm_faults=[invalid(), provider(503)]),
        Status.ERRORED,
        "LLM provider error: HTTP 503: scripted HTTP 500",
    ),
    (
        "a provider fault without HTTP status",
        spec(),
        AgentRun(llm_faults=[provider(None)]),
        Status.ERRORED,
        "LLM provider error: scripted HTTP 500",
    ),
    (
        "no done action because the output was invalid",
        spec(),
        AgentRun(llm_faults=[provider(), invalid()]),
        Status.FAILED,
        "the agent's output was invalid and it never reported a verdict: not valid JSON",
    ),
    (
        "max steps, when the agent was still making progress, outranks an earlier invalid output",
        spec(max_steps=3),
        AgentRun(max_steps_reached=True, llm_faults=[invalid()]),
        Status.FAILED,
        "the agent did not finish within max_steps=3",
    ),
    (
        "invalid output that never stopped outranks max steps",
        spec(max_steps=3),
        AgentRun(max_steps_reached=True, unusable_since=2, llm_faults=[invalid(), invalid()]),
        Status.FAILED,
        "the agent's output was invalid and it never reported a verdict: not valid JSON",
    ),
    (
        "a provider fault outranks max steps",
        spec(max_steps=3),
        AgentRun(max_steps_reached=True, llm_faults=[provider()]),
        Status.ERRORED,
        "LLM provider error: HTTP 500: scripted HTTP 500",
    ),
    (
        "judge faults do not explain a missing done",
        spec(),
        AgentRun(llm_faults=[provider(purpose="judge")]),
        Status.FAILED,
        "the agent stopped without reporting a verdict",
    ),
    (
        "the judge agrees",
        spec(judge=True),
        AgentRun(done=done(), judge_requested=True, judge=JudgeReport(verdict=True, reason="")),
        Status.PASSED,
        "it works",
    ),
    (
        "the judge disagrees",
        spec(judge=True),
        AgentRun(done=done(), judge_requested=True, judge=JudgeReport(verdict=False, reason="no price")),
        Status.FAILED,
        "the judge disagreed with the agent's pass: no price",
    ),
    (
        "the judge disagrees without a reason",
        spec(judge=True),
        AgentRun(done=done(), judge_requested=True, judge=JudgeReport(verdict=False, reason="")),
        Status.FAILED,
        "the judge disagreed with the agent's pass: no reason given",
    ),
    (
        "a requested judge that never answered",
        spec(judge=True),
        AgentRun(done=done(), judge_requested=True),
        Status.FAILED,
        "the judge gave no valid verdict",
    ),
    (
        "a requested judge whose provider failed",
        spec(judge=True),
        AgentRun(done=done(), judge_requested=True, llm_faults=[provider(429, "judge")]),
        Status.ERRORED,
        "LLM provider error (judge): HTTP 429: scripted HTTP 500",
    ),
    (
        "a judge cannot turn a fail into a pass",
        spec(judge=True),
        AgentRun(done=done("fail", "bad"), judge_requested=True, judge=JudgeReport(verdict=True, reason="")),
        Status.FAILED,
        "agent: bad",
    ),
    (
        "a judge cannot overrule a failed check",
        spec(judge=True),
        AgentRun(done=done(), judge_requested=True, judge=JudgeReport(verdict=True, reason=""), expectations=[check(False)]),
        Status.FAILED,
        "expectation url failed: ...",
    ),
]


@pytest.mark.parametrize(("test", "trace", "status", "reason"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_verdict_table(test: TestSpec, trace: AgentRun, status: Status, reason: str) -> None:
    verdict = decide(test, trace).verdict
    assert verdict.status is status
    if reason.endswith("..."):
        assert verdict.reason.startswith(reason.removesuffix("...")), verdict.reason
    else:
        assert verdict.reason == reason


def test_only_a_valid_report_is_kept_as_the_agents_verdict() -> None:
    report = decide(spec(), AgentRun(done=done(success=False))).report
    assert report is None  # a self-contradicting report is not shown as "the agent said pass"
    report = decide(spec(), AgentRun(done=done("fail", "nope"))).report
    assert report is not None and report.status == "fail"


def test_a_failed_check_keeps_the_agents_claim_and_the_other_checks_as_causes() -> None:
    trace = AgentRun(
        done=done(reason="looks fine"),
        expectations=[check(False), check(False, "text")],
        evidence=EvidenceSummary(page_errors=1, first_page_error="TypeError: x is undefined"),
    )
    decision = decide(spec(), trace)
    verdict, expectations = decision.verdict, decision.expectations
    assert verdict.causes == [
        "expectation text failed: expected URL containing '/dashboard', found http://x/login",
        "the agent said pass: looks fine",
        "the page threw an uncaught exception: TypeError: x is undefined",
    ]
    assert len(expectations) == 2


def test_data_checks_are_returned_with_the_page_checks() -> None:
    expectations = decide(
        spec(expect={"data": {"a": 1}}), AgentRun(done=done(data={"a": 1}), expectations=[check(True)])
    ).expectations
    assert [(e.check, e.ok) for e in expectations] == [("url", True), ("data.a", True)]


@pytest.mark.parametrize(
    "trace",
    [
        AgentRun(done=done(reason="all good"), expectations=[check(True)]),  # whatever it reports afterwards
        AgentRun(infrastructure_error="timed out after 60 s"),
        AgentRun(execution=Execution.REPLAYED, expectations=[check(True)]),
        AgentRun(replay_error="step 2: navigate: blocked"),
    ],
)
def test_a_secret_the_agent_tried_to_carry_off_fails_the_test_first(trace: AgentRun) -> None:
    trace.secret_attempts = [SecretAttempt("pw", "collector.example"), SecretAttempt("api-key", "cdn.example")]
    verdict = decide(spec(), trace).verdict
    assert verdict.status == Status.FAILED
    assert verdict.reason == "the agent tried to send secret 'pw' to collector.example"
    assert verdict.causes[0] == "the agent tried to send the API key to cdn.example"


def test_no_report_lists_how_many_calls_failed_and_why() -> None:
    verdict = decide(spec(), AgentRun(llm_faults=[invalid(), invalid(), provider()])).verdict
    assert verdict.causes == ["2 LLM answer(s) were not a valid agent output", "1 LLM call(s) failed at the provider"]


def test_reasons_are_one_line_and_clipped() -> None:
    verdict = decide(spec(), AgentRun(done=done("fail", "line one\n\tline two " + "x" * 2000))).verdict
    assert "\n" not in verdict.reason and verdict.reason.startswith("agent: line one line two x")
    assert len(verdict.reason) == REASON_LIMIT and verdict.reason.endswith("…")


def test_parse_report_returns_the_report_or_why_not() -> None:
    report, problem = parse_report(spec(), '{"status": "pass", "reason": "ok", "data": {"n": 1}}')
    assert problem is None and report is not None and report.data == {"n": 1}
    assert parse_report(spec(), '{"status": "pass"}') == (
        None,
        "the agent's final report breaks its schema at reason: Field required",
    )


@pytest.mark.parametrize(
    ("expected", "data", "ok", "found"),
    [
        ({"price": "$19.99"}, {"price": " $19.99 "}, True, '" $19.99 "'),  # surrounding whitespace is ignored
        ({"price": "$19.99"}, {"price": "$19.990"}, False, '"$19.990"'),
        ({"count": 3}, {"count": 3.0}, True, "3.0"),  # numbers compare by value
        ({"count": 3}, {"count": "3"}, False, '"3"'),  # but a string is not a number
        ({"flag": True}, {"flag": 1}, False, "1"),  # and 1 is not True
        ({"count": 1}, {"count": True}, False, "true"),
        ({"flag": False}, {"flag": False}, True, "false"),
        ({"gone": None}, {"gone": None}, True, "null"),
        ({"gone": None}, {}, False, "no such key"),  # a missing key never equals null
        ({"user.name": "Ada"}, {"user": {"name": "Ada"}}, True, '"Ada"'),  # dotted paths reach into objects
        ({"user.name": "Ada"}, {"user.name": "Ada", "user": {"name": "Bob"}}, True, '"Ada"'),  # a literal key wins
        ({"orders.1.id": "#1002"}, {"orders": [{"id": "#1001"}, {"id": "#1002"}]}, True, '"#1002"'),  # list indices
        ({"orders.5.id": "#1002"}, {"orders": [{"id": "#1001"}]}, False, "no such key"),
        ({"user.name.first": "Ada"}, {"user": {"name": "Ada"}}, False, "no such key"),  # cannot walk into a string
        ({"tags": ["a", "b"]}, {"tags": ["a", "b"]}, True, '["a", "b"]'),
        ({"tags": ["a", "b"]}, {"tags": ["b", "a"]}, False, '["b", "a"]'),  # lists keep their order
        ({"tags": [1]}, {"tags": [1, 2]}, False, "[1, 2]"),
        ({"dim": {"w": 2, "h": 3}}, {"dim": {"h": 3.0, "w": 2}}, True, '{"h": 3.0, "w": 2}'),
        ({"dim": {"w": 2}}, {"dim": {"w": 2, "h": 3}}, False, '{"w": 2, "h": 3}'),  # no extra keys in an expected object
        ({"prix": "19,99 €"}, {"prix": "19,99 €"}, True, '"19,99 €"'),
    ],
)
def test_check_data(expected: dict[str, Any], data: dict[str, Any], ok: bool, found: str) -> None:
    [outcome] = check_data(expected, data)
    assert (outcome.ok, outcome.found) == (ok, found)
    assert outcome.check == f"data.{next(iter(expected))}"


def test_check_data_clips_what_it_shows() -> None:
    [outcome] = check_data({"blob": "x"}, {"blob": "y" * 1000})
    assert not outcome.ok and len(outcome.found) == 160 and outcome.found.endswith("…")


def test_browser_error_causes_name_the_first_of_each_kind_and_count_the_rest() -> None:
    evidence = EvidenceSummary(
        failed_requests=3,
        first_failed_request="GET http://x/api/cart: HTTP 500",
        console_errors=1,
        first_console_error="cart failed to load (at http://x/app.js)",
    )
    verdict = decide(spec(), AgentRun(done=done("fail", "no total"), evidence=evidence)).verdict
    assert verdict.causes == [
        "a request failed: GET http://x/api/cart: HTTP 500 (2 more in events.jsonl)",
        "console error: cart failed to load (at http://x/app.js)",
    ]


def test_the_model_browser_use_fills_and_the_verdict_parser_share_one_contract() -> None:
    from preview_qa.agent.adapter.build import report_model

    for refused in (
        {"status": "pass", "reason": ""},
        {"status": "pass", "reason": "  "},
        {"status": "pass", "reason": "ok", "verdict": "pass"},
        {"status": "maybe", "reason": "ok"},
        {"status": "pass"},
    ):
        text = json.dumps(refused)
        assert parse_report(spec(), text)[0] is None
        with pytest.raises(ValidationError):
            report_model(None).model_validate_json(text)
    accepted = json.dumps({"status": "pass", "reason": "fine"})
    assert parse_report(spec(), accepted)[0] is not None
    assert report_model(None).model_validate_json(accepted).model_dump() == {
        "status": "pass",
        "reason": "fine",
        "quotes": [],
        "addressed": [],
        "blocked_by": None,
    }
