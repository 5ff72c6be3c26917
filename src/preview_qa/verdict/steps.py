"""Pure: a test written as steps judged step by step (issue #47): each goal by `decide` on its own spec and run, each
exact step by its action and checks; the first step that does not pass decides the test there, named ("step 2 of 4,
'Open the cart': ..."), and the steps after it are not run. A test's own checks, data and server errors come after its
last step; a secret the test tried to carry off outweighs everything, as for a task."""

from __future__ import annotations

import dataclasses

from preview_qa.manifest.models import TestSpec
from preview_qa.manifest.steps import StepKind, step_words
from preview_qa.results import (
    REASON_LIMIT,
    Execution,
    ExpectationOutcome,
    FallBack,
    QuoteCheck,
    Status,
    StepExecution,
    StepResult,
    StepStatus,
    Usage,
    Verdict,
    check_line,
    evidence_lines,
    one_line,
)
from preview_qa.verdict.agent_run import AgentReport, AgentRun, BlockedBy, StepRun
from preview_qa.verdict.blocked import blocked_line
from preview_qa.verdict.checks.data_checks import check_data
from preview_qa.verdict.checks.requests import blocked_navigation_lines, server_error_lines
from preview_qa.verdict.decide import Decision, decide, drift_line, not_healed, secret_line
from preview_qa.verdict.quotes import checks_inside_instructions

STATUS = {Status.PASSED: StepStatus.PASSED, Status.FAILED: StepStatus.FAILED, Status.ERRORED: StepStatus.ERRORED}


def decide_test(spec: TestSpec, run: AgentRun, judge_drift: bool = False) -> Decision:
    """A task's decision (`decide`), or a test's written as steps; `judge_drift` (a proof's replay): a goal whose
    replay could not follow its recording is judged by its checks on the page the app showed instead."""
    return decide(spec, run) if spec.steps is None else decide_steps(spec, run, judge_drift)


def decide_steps(spec: TestSpec, run: AgentRun, judge_drift: bool = False) -> Decision:
    """Each step's outcome, then the test's verdict from the first step that did not pass, else from its own checks."""
    assert spec.steps is not None
    ran = {s.index: s for s in run.step_runs}
    results: list[StepResult] = []
    first_bad: tuple[int, Verdict] | None = None
    reasons: list[str] = []
    report: AgentReport | None = None
    expectations: list[ExpectationOutcome] = []
    quotes: list[QuoteCheck] = []
    addressed: list[QuoteCheck] = []
    word: str | None = None  # the first goal that passed on the agent's word alone
    steered: str | None = None  # the first goal a page addressed, in a test whose checks decide
    checked = spec.expect.has_page_checks or any(spec.step_checks(i).has_page_checks for i in range(1, len(spec.steps) + 1))
    for index, step in enumerate(spec.steps, start=1):
        step_run = ran.get(index)
        if first_bad is not None or step_run is None:
            results.append(StepResult(index=index, name=step.title, kind=step.kind.value, status=StepStatus.NOT_RUN))
            continue
        decision = step_decision(spec, step_run, run, judge_drift, checked)
        expectations += [_named(o, index, len(spec.steps)) for o in decision.expectations]
        quotes += decision.quotes
        addressed += decision.addressed
        word = word or decision.unverified
        steered = steered or decision.steered
        if index == spec.data_step:
            report = decision.report
        results.append(_result(step.title, step_run, decision.verdict))
        reasons.append(decision.verdict.reason)
        if decision.verdict.status is not Status.PASSED:
            first_bad = (index, decision.verdict)
    only = reasons[0] if len(spec.steps) == 1 and reasons else None
    said = [a.quote for a in addressed if a.found]  # the test's own checks count no text inside them either
    final_checks = checks_inside_instructions(spec.expect, list(run.expectations), run.shown, said)
    verdict, final = _test_verdict(spec, dataclasses.replace(run, expectations=final_checks), first_bad, report, only)
    passed = verdict.status is Status.PASSED
    unverified = word if passed and not checked else None  # no check anywhere grounds it
    return Decision(
        verdict,
        report,
        expectations + final,
        results,
        quotes=quotes,
        unverified=unverified,
        addressed=addressed,
        steered=steered if passed else None,
        checked=passed and checked,
    )


def step_decision(spec: TestSpec, step: StepRun, test: AgentRun, judge_drift: bool = False, checked: bool = False) -> Decision:
    """One step's decision; a step the test stopped in (its timeout, a crash) errors with the test's reason. With
    `judge_drift` (a proof), a goal's drift is judged by its checks where the replay stood, as a task's is; `checked`:
    the test has page checks somewhere, which a goal a page addressed then rests on."""
    index = step.index
    if not step.finished:
        reason = test.infrastructure_error or "the test stopped during this step"
        return Decision(Verdict(status=Status.ERRORED, reason=one_line(reason, REASON_LIMIT)), None, step.run.expectations)
    if step.kind is StepKind.DO:  # its quotes are looked up in what the test's pages showed
        goal_run = dataclasses.replace(step.run, shown=test.shown, quote_notes=test.quote_notes)
        goal_run = dataclasses.replace(goal_run, replay_error=None) if judge_drift else goal_run
        decision = decide(spec.goal(index), goal_run, checked_elsewhere=checked)
        if step.execution is StepExecution.REPLAY and step.drift is not None and not spec.heal:
            return Decision(not_healed(decision.verdict, drift_line(step.drift)), None, decision.expectations)
        return decision
    failed = [o for o in step.run.expectations if not o.ok]
    if step.action_error is not None:
        return Decision(Verdict(status=Status.FAILED, reason=one_line(step.action_error, REASON_LIMIT)), None, [])
    if failed:
        causes = [check_line(o) for o in failed[1:]]
        return Decision(Verdict(status=Status.FAILED, reason=check_line(failed[0]), causes=causes), None, step.run.expectations)
    checks = len(step.run.expectations)
    reason = f"done; {checks} check(s) hold" if checks else "done"
    return Decision(Verdict(status=Status.PASSED, reason=reason), None, step.run.expectations)


def _result(title: str, step: StepRun, verdict: Verdict) -> StepResult:
    return StepResult(
        index=step.index,
        name=title,
        kind=step.kind.value,
        status=STATUS.get(verdict.status, StepStatus.ERRORED),
        reason=verdict.reason,
        duration_s=round(step.duration_s, 2),
        agent_steps=step.agent_steps,
        usage=step.run.usage,
        execution=step_execution(step, verdict.status),
    )


def step_execution(step: StepRun, status: Status) -> StepExecution:
    """How the step ran as its result says it: a goal the agent took over from its replay is healed only if it then
    passed (a failed step is never healed: the agent ran it, and it failed)."""
    healed = step.execution is StepExecution.HEALED
    return StepExecution.AGENT if healed and status is not Status.PASSED else step.execution


def _test_verdict(
    spec: TestSpec, run: AgentRun, first_bad: tuple[int, Verdict] | None, report: AgentReport | None, only: str | None
) -> tuple[Verdict, list[ExpectationOutcome]]:
    """The test's verdict, and the outcomes of its own checks (data included) when they were judged; `only`: the
    reason of a test's one step, which a one-step test passes with, as a task does."""
    assert spec.steps is not None
    total = len(spec.steps)
    servers = server_error_lines(spec, run)
    others = [*blocked_navigation_lines(run), *run.access_denied, *evidence_lines(run.evidence)]
    if run.secret_attempts:  # first, as for a task: no step's outcome outweighs a secret the test tried to carry off
        lines = [secret_line(a) for a in run.secret_attempts]
        return _verdict(Status.FAILED, lines[0], [*lines[1:], *servers, *others]), []
    if first_bad is not None:
        index, verdict = first_bad
        named = f"{step_words(index, total, spec.steps[index - 1].title)}: "  # a one-step test's too (#65, 12)
        causes = [*verdict.causes, *servers, *others]
        if run.protected_start and verdict.status is Status.FAILED:  # the preview itself was never reached
            return _verdict(Status.ERRORED, blocked_line(BlockedBy.HOST_PROTECTION), [named + verdict.reason, *causes]), []
        return _verdict(verdict.status, named + verdict.reason, causes), []
    if run.infrastructure_error:
        return _verdict(Status.ERRORED, run.infrastructure_error, [*servers, *others]), []
    final = list(run.expectations)
    if report is not None and spec.expect.data:
        final += check_data(spec.expect.data, report.data or {})
    problems = [check_line(o) for o in final if not o.ok] + servers
    if problems:
        return _verdict(Status.FAILED, problems[0], [*problems[1:], *others]), final
    if only is not None:  # one step reads as a task: its own reason
        return Verdict(status=Status.PASSED, reason=only), final
    held = f"; {len(final)} expectation(s) hold on the final page" if final else ""
    return Verdict(status=Status.PASSED, reason=f"all {total} steps passed{held}"), final


def _verdict(status: Status, reason: str, causes: list[str]) -> Verdict:
    return Verdict(status=status, reason=one_line(reason, REASON_LIMIT), causes=[one_line(c, REASON_LIMIT) for c in causes])


def _named(outcome: ExpectationOutcome, index: int, total: int) -> ExpectationOutcome:
    """A step's check as the test's expectations list it: `step 2 text` (a one-step test's as they are)."""
    return outcome if total == 1 else outcome.model_copy(update={"check": f"step {index} {outcome.check}"})


def fell_back_of(run: AgentRun) -> FallBack | None:
    """Why a step test's replay handed a goal to the agent: a page that changed (healed) first, else any other cause."""
    causes = [s.fell_back for s in run.step_runs if s.fell_back is not None]
    return FallBack.PAGE_CHANGED if FallBack.PAGE_CHANGED in causes else (causes[0] if causes else None)


def steps_drift(spec: TestSpec, run: AgentRun) -> str | None:
    """The first goal replay of a step test that stopped matching the app, as every report words a drift, naming the
    manifest's step and the agent step in it: "replay drifted at step 5 of 7, 'Pay', agent step 1: click ..."."""
    steps = spec.steps or []
    drifted = next((s for s in run.step_runs if s.drift and s.index <= len(steps)), None)
    if drifted is None or drifted.drift is None:
        return None
    return drift_line(f"{step_words(drifted.index, len(steps), steps[drifted.index - 1].title)}, {drifted.drift}")


def task_step(spec: TestSpec, run: AgentRun, verdict: Verdict, healed: bool, duration_s: float, usage: Usage) -> StepResult:
    """A `task:` test as its one step: its goal, its verdict, how it ran."""
    execution = {
        Execution.AGENT: StepExecution.AGENT,
        Execution.REPLAYED: StepExecution.REPLAY,
        Execution.REPLAY_FELL_BACK: StepExecution.HEALED if healed else StepExecution.AGENT,
    }.get(run.execution)
    return StepResult(
        index=1,
        name=one_line(spec.task or "", REASON_LIMIT),
        kind=StepKind.DO.value,
        status=STATUS.get(verdict.status, StepStatus.ERRORED),
        reason=verdict.reason,
        duration_s=round(duration_s, 2),
        agent_steps=(1, run.steps) if run.steps else None,
        usage=usage,
        execution=execution,
    )
