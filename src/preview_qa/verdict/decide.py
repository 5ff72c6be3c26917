"""Pure: (test spec, the agent's run, page checks) -> Verdict, for a task or one goal of a test written as steps (the
test's final verdict is verdict/final.py's). Anything missing, malformed or contradictory fails."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from preview_qa.manifest.models import TestSpec
from preview_qa.results import (
    REASON_LIMIT,
    Execution,
    ExpectationOutcome,
    QuoteCheck,
    Status,
    StepResult,
    Verdict,
    agent_said_pass_line,
    check_line,
    evidence_lines,
    one_line,
)
from preview_qa.secrets.redact import describe
from preview_qa.verdict.agent_run import AgentReport, AgentRun, BlockedBy, LLMFault, SecretAttempt
from preview_qa.verdict.blocked import blocked_line
from preview_qa.verdict.checks.data_checks import check_data
from preview_qa.verdict.checks.requests import blocked_navigation_lines, server_error_lines
from preview_qa.verdict.quotes import checks_inside_instructions, grounding, shown_addressed
from preview_qa.verdict.second_look import look_verdict


def parse_report(spec: TestSpec, done_text: str | None) -> tuple[AgentReport | None, str | None]:
    """The agent's report if it is valid for this test, else None and why not."""
    if done_text is None:
        return None, "the agent's final report is empty"
    try:
        report = AgentReport.model_validate_json(done_text)
    except ValidationError as e:
        first = e.errors(include_url=False)[0]
        if first["type"] == "json_invalid":
            return None, "the agent's final report is not valid JSON"
        where = ".".join(str(p) for p in first["loc"]) or "top level"
        return None, f"the agent's final report breaks its schema at {where}: {first['msg']}"
    if spec.output_schema is not None:
        if report.data is None:
            return None, "the agent returned no extracted data although the test declares an output_schema"
        import jsonschema  # only a test with an output_schema: not on every run's start

        error = jsonschema.exceptions.best_match(
            jsonschema.validators.validator_for(spec.output_schema)(spec.output_schema).iter_errors(report.data)
        )
        if error is not None:
            where = ".".join(str(p) for p in error.absolute_path) or "top level"
            return None, f"the agent's extracted data breaks output_schema at {where}: {one_line(error.message, 200)}"
    return report, None


@dataclass(frozen=True)
class Decision:
    """What the verdict makes of one run: the verdict, the agent's report when the verdict rests on it (valid, and
    neither contradicted by its own success flag nor from a replay that drifted), every expectation's outcome, the
    report's quotes looked up, and why a pass stands on the agent's word alone (None: it does not, or no pass)."""

    verdict: Verdict
    report: AgentReport | None
    expectations: list[ExpectationOutcome]
    steps: list[StepResult] = field(default_factory=list)  # a test written as steps: each step's outcome (verdict/steps.py)
    quotes: list[QuoteCheck] = field(default_factory=list)
    unverified: str | None = None
    addressed: list[QuoteCheck] = field(default_factory=list)  # the page text the agent said addressed it, looked up
    steered: str | None = None  # a pass whose own checks held although a page addressed the agent: the warning
    checked: bool = False  # a pass that a deterministic page check of its own held for (--fail-on unchecked)


def decide(spec: TestSpec, agent_run: AgentRun, checked_elsewhere: bool = False) -> Decision:
    """The verdict, the agent's valid report (if any) and every expectation's outcome, page and data alike; a pass
    holds only where its quotes were shown (verdict/quotes.py), and never on the agent's word alone once a page
    addressed the agent. `checked_elsewhere`: a goal of a test written as steps whose test has page checks elsewhere
    (they decide whether it rests on the agent's word)."""
    report, invalid = parse_report(spec, agent_run.done.text) if agent_run.done else (None, None)
    said = shown_addressed(report.addressed, agent_run.shown) if report is not None else []
    expectations = checks_inside_instructions(spec.expect, list(agent_run.expectations), agent_run.shown, said)
    if report is not None and spec.expect.data:
        expectations += check_data(spec.expect.data, report.data or {})
    verdict = _verdict(spec, agent_run, report, invalid, expectations)
    if agent_run.protected_start and verdict.status is Status.FAILED and not agent_run.secret_attempts:
        # The preview was never reached: what failed there says nothing about the app (the agent may well say "fail:
        # the page only says 401 Unauthorized").
        verdict = _error(blocked_line(BlockedBy.HOST_PROTECTION), [verdict.reason, *verdict.causes])
    unused = not agent_run.infrastructure_error and (agent_run.replay_error or _contradicted(agent_run, report))
    kept = None if unused else report
    quotes, addressed = (kept.quotes, kept.addressed) if kept is not None else ([], [])
    if agent_run.second_look is not None:  # what the second look found addressed a tester counts as the agent's does
        addressed = [*addressed, *agent_run.second_look.addressed]
    grounded = grounding(spec, quotes, agent_run.shown, agent_run.quote_notes, addressed)
    looked, seen = grounded.quotes, grounded.addressed
    if verdict.status is not Status.PASSED:
        return Decision(verdict, kept, expectations, quotes=looked, addressed=seen)
    if grounded.failed is not None:  # the checks held, but the agent's evidence is no page's: no pass
        failed = _fail(grounded.failed, [agent_said_pass_line(verdict.reason)])
        return Decision(failed, kept, expectations, quotes=looked, addressed=seen)
    checked = spec.expect.has_page_checks and any(e.ok for e in expectations)
    if grounded.steered is not None and not (checked or checked_elsewhere):  # a page talked to the agent: its word is no pass
        return Decision(
            _fail(grounded.steered, [agent_said_pass_line(verdict.reason)]), kept, expectations, quotes=looked, addressed=seen
        )
    looked_again = look_verdict(agent_run)
    if looked_again is not None:  # the judge's second look: a quote that is no outcome, or no valid answer
        causes = [agent_said_pass_line(verdict.reason)]
        return Decision(looked_again.model_copy(update={"causes": causes}), kept, expectations, quotes=looked, addressed=seen)
    return Decision(
        verdict,
        kept,
        expectations,
        quotes=looked,
        addressed=seen,
        unverified=grounded.unverified,
        steered=grounded.steered,
        checked=checked,
    )


def _verdict(
    spec: TestSpec, agent_run: AgentRun, report: AgentReport | None, invalid: str | None, expectations: list[ExpectationOutcome]
) -> Verdict:
    # What the app itself got wrong, whatever the agent said: a check that failed, a server error after an action.
    servers = server_error_lines(spec, agent_run)
    problems = [*(_describe_check(e) for e in expectations if not e.ok), *servers]
    others = [*blocked_navigation_lines(agent_run), *agent_run.access_denied, *_evidence_causes(agent_run)]
    evidence = servers + others  # the causes of a verdict that rests on something else
    if agent_run.secret_attempts:  # first: no report, error or check outweighs a secret the agent tried to carry off
        block = [blocked_line(report.blocked_by)] if report is not None and report.status == "blocked" else []
        return _fail(
            secret_line(agent_run.secret_attempts[0]),
            [*(secret_line(a) for a in agent_run.secret_attempts[1:]), *block, *evidence],
        )
    if agent_run.infrastructure_error:
        return _error(agent_run.infrastructure_error, evidence)
    if agent_run.replay_error:
        return _fail(drift_line(agent_run.replay_error), evidence)
    if agent_run.execution is Execution.REPLAYED and agent_run.done is None:
        return _replayed(spec, expectations, problems, others)
    if agent_run.done is None:
        return _no_report(spec, agent_run, evidence)
    if invalid:
        return _fail(invalid, evidence)
    assert report is not None
    if _contradicted(agent_run, report):
        return _fail("the agent's report contradicts itself: status 'pass' but success=false", evidence)
    if report.status == "fail":
        return _fail(f"agent: {report.reason}", problems + others)
    if report.status == "blocked":  # not the app's fault, so no failure; never a pass either, unless the app failed too
        block = [blocked_line(report.blocked_by), f"agent: {report.reason}"]
        if problems:
            return _fail(problems[0], [*problems[1:], *block, *others])
        return _error(block[0], block[1:] + others)
    if problems:
        return _fail(problems[0], [*problems[1:], agent_said_pass_line(report.reason), *others])
    judge_problem = _judge_problem(agent_run)
    if judge_problem is not None:
        return judge_problem
    return Verdict(status=Status.PASSED, reason=one_line(report.reason, REASON_LIMIT))


def not_healed(verdict: Verdict, drift: str | None) -> Verdict:
    """A replay that did not hold, under `heal: false`: it fails as it ended, with the drift as its reason; an error
    (the browser, the preview) stays an error with its own cause."""
    if verdict.status is Status.ERRORED or verdict.status is Status.PASSED:
        return verdict
    why = drift or f"the replay did not pass ({verdict.reason})"
    return Verdict(
        status=Status.FAILED,
        reason=f"{why}; heal: false, so the agent did not take over",
        causes=[verdict.reason, *verdict.causes] if drift else verdict.causes,
    )


def _contradicted(agent_run: AgentRun, report: AgentReport | None) -> bool:
    """The report says pass while the agent's own done action said it did not succeed."""
    return agent_run.done is not None and agent_run.done.success is False and report is not None and report.status == "pass"


def secret_line(attempt: SecretAttempt) -> str:
    """How a stopped secret is reported everywhere: by its name and the host, never its value."""
    return f"the agent tried to send {describe(attempt.name)} to {attempt.host}"


def drift_line(replay_error: str) -> str:
    """How a replay that stopped matching the app is reported everywhere: replay drifted at step 3: click ...: why."""
    return f"replay drifted at {replay_error}"


def replay_needs_llm_check(spec: TestSpec) -> bool:
    """Code alone judges a replay only when the test declares page expectations and asks for no data."""
    return not spec.expect.has_page_checks or spec.output_schema is not None or bool(spec.expect.data)


def _replayed(spec: TestSpec, expectations: list[ExpectationOutcome], problems: list[str], others: list[str]) -> Verdict:
    """A replay without a report passes only on page expectations checked by code, every one of them holding, and no
    server error after its actions."""
    if replay_needs_llm_check(spec) or not expectations:
        return _fail("the page check after the replay gave no valid verdict", [*problems, *others])
    if problems:
        return _fail(problems[0], [*problems[1:], *others])
    return Verdict(
        status=Status.PASSED,
        reason=f"replayed the recorded steps without the agent; all {len(expectations)} expectation(s) hold on the final page",
    )


def provider_outage(agent_run: AgentRun) -> str | None:
    """The provider error that left this test without a report, if that is what ended it (for the run's circuit breaker)."""
    agent_faults = [f for f in agent_run.llm_faults if f.purpose == "agent"]
    if agent_run.done is not None or not agent_faults or agent_faults[-1].kind != "provider":
        return None
    return _describe_fault(agent_faults[-1])


def _no_report(spec: TestSpec, agent_run: AgentRun, evidence: list[str]) -> Verdict:
    """No done action: a provider that failed is an error; anything the model did wrong is a failure."""
    agent_faults = [f for f in agent_run.llm_faults if f.purpose == "agent"]
    last = agent_faults[-1] if agent_faults else None
    if last is not None and last.kind == "provider":
        return _error(f"LLM provider error: {_describe_fault(last)}", [*_fault_counts(agent_faults), *evidence])
    stalled = last is not None and agent_run.unusable_since is not None
    if agent_run.max_steps_reached and not stalled:
        return _fail(f"the agent did not finish within max_steps={spec.max_steps}", [*_fault_counts(agent_faults), *evidence])
    if last is not None:
        # one fault, one headline: output that stopped being usable explains the end, however the steps ran out
        ran_out = (
            [f"no answer from step {agent_run.unusable_since} on was usable, so max_steps={spec.max_steps} ran out"]
            if agent_run.max_steps_reached
            else []
        )
        return _fail(
            f"the agent's output was invalid and it never reported a verdict: {last.message}",
            [*ran_out, *_fault_counts(agent_faults), *evidence],
        )
    return _fail("the agent stopped without reporting a verdict", evidence)


def _judge_problem(agent_run: AgentRun) -> Verdict | None:
    if not agent_run.judge_requested:
        return None
    if agent_run.judge is not None:
        if agent_run.judge.verdict:
            return None
        return _fail(f"the judge disagreed with the agent's pass: {agent_run.judge.reason or 'no reason given'}", [])
    judge_faults = [f for f in agent_run.llm_faults if f.purpose == "judge"]
    if judge_faults and judge_faults[-1].kind == "provider":
        return _error(f"LLM provider error (judge): {_describe_fault(judge_faults[-1])}", [])
    return _fail("the judge gave no valid verdict", [])


def _fail(reason: str, causes: list[str]) -> Verdict:
    return Verdict(
        status=Status.FAILED, reason=one_line(reason, REASON_LIMIT), causes=[one_line(c, REASON_LIMIT) for c in causes]
    )


def _error(reason: str, causes: list[str]) -> Verdict:
    """Errors carry text from exceptions and providers: one line, clipped, and never empty."""
    return Verdict(
        status=Status.ERRORED,
        reason=one_line(reason, REASON_LIMIT) or "an error without any message",
        causes=[one_line(c, REASON_LIMIT) for c in causes],
    )


def _describe_check(e: ExpectationOutcome) -> str:
    return check_line(e)


def _describe_fault(fault: LLMFault) -> str:
    return f"HTTP {fault.status}: {fault.message}" if fault.status else fault.message


def _fault_counts(faults: list[LLMFault]) -> list[str]:
    provider = sum(1 for f in faults if f.kind == "provider")
    invalid = len(faults) - provider
    out = []
    if invalid:
        out.append(f"{invalid} LLM answer(s) were not a valid agent output")
    if provider:
        out.append(f"{provider} LLM call(s) failed at the provider")
    return out


def _evidence_causes(agent_run: AgentRun) -> list[str]:
    return evidence_lines(agent_run.evidence)


def report_as_dict(report: AgentReport | None) -> dict[str, Any] | None:
    return json.loads(report.model_dump_json(exclude_none=True)) if report else None
