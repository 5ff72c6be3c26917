"""A test written as steps, judged step by step (verdict/steps.py, pure): the first step that does not pass names the
test's reason, the later ones are not run, test-wide facts keep their order, and a one-step test reads as a task."""

from __future__ import annotations

import json
from typing import Any

from preview_qa.manifest.models import TestSpec
from preview_qa.manifest.steps import StepKind
from preview_qa.results import (
    Execution,
    ExpectationOutcome,
    FallBack,
    Status,
    StepExecution,
    StepStatus,
    Usage,
    Verdict,
)
from preview_qa.verdict.agent_run import AgentRun, DoneReport, SecretAttempt, ServerError, StepRun
from preview_qa.verdict.final import Facts, final_verdict
from preview_qa.verdict.steps import decide_test, task_step


def steps_spec(*steps: dict[str, Any], **kw: Any) -> TestSpec:
    return TestSpec.model_validate({"name": "checkout", "steps": list(steps), **kw})


def report(status: str = "pass", reason: str = "done it", **kw: Any) -> DoneReport:
    return DoneReport(text=json.dumps({"status": status, "reason": reason, **kw}), success=True)


def check(ok: bool, text: str = "Cart: 1 item") -> ExpectationOutcome:
    return ExpectationOutcome(check="text", expected=f"visible text {text!r}", found="it is visible" if ok else "no", ok=ok)


def goal(index: int, done: DoneReport | None = None, checks: tuple[bool, ...] = (), **kw: Any) -> StepRun:
    run = AgentRun(done=done or report(), expectations=[check(ok) for ok in checks], usage=Usage(llm_calls=2))
    return StepRun(index, StepKind.DO, StepExecution.AGENT, run, agent_steps=(1, 2), duration_s=1.5, finished=True, **kw)


def exact(index: int, kind: StepKind = StepKind.OPEN, checks: tuple[bool, ...] = (), **kw: Any) -> StepRun:
    run = AgentRun(expectations=[check(ok) for ok in checks])
    return StepRun(index, kind, StepExecution.EXACT, run, duration_s=0.5, finished=True, **kw)


FOUR = (
    {"do": "Add the anvil", "expect": {"text": "Cart: 1 item"}},
    {"open": "/cart", "name": "Open the cart", "expect": {"text": "Cart: 1 item"}},
    {"open": "/checkout"},
    {"do": "Pay"},
)


def test_every_step_passed_and_each_says_how_it_ran() -> None:
    run = AgentRun(step_runs=[goal(1, checks=(True,)), exact(2, checks=(True,)), exact(3), goal(4)])
    decision = decide_test(steps_spec(*FOUR), run)
    assert (decision.verdict.status, decision.verdict.reason) == (Status.PASSED, "all 4 steps passed")
    assert [(s.index, s.status, s.execution) for s in decision.steps] == [
        (1, StepStatus.PASSED, StepExecution.AGENT),
        (2, StepStatus.PASSED, StepExecution.EXACT),
        (3, StepStatus.PASSED, StepExecution.EXACT),
        (4, StepStatus.PASSED, StepExecution.AGENT),
    ]
    assert decision.steps[1].name == "Open the cart" and decision.steps[2].name == "Open /checkout"
    assert decision.steps[0].agent_steps == (1, 2) and decision.steps[0].usage.llm_calls == 2
    assert [e.check for e in decision.expectations] == ["step 1 text", "step 2 text"]


def test_a_failed_check_fails_the_test_at_its_step_and_the_later_steps_do_not_run() -> None:
    run = AgentRun(step_runs=[goal(1, checks=(True,)), exact(2, checks=(False,))])
    decision = decide_test(steps_spec(*FOUR), run)
    assert decision.verdict.status is Status.FAILED
    assert decision.verdict.reason == (
        "step 2 of 4, 'Open the cart': expectation text failed: expected visible text 'Cart: 1 item', found no"
    )
    assert [s.status for s in decision.steps] == [StepStatus.PASSED, StepStatus.FAILED, StepStatus.NOT_RUN, StepStatus.NOT_RUN]
    assert decision.steps[2].execution is None and decision.steps[2].name == "Open /checkout"


def test_a_goal_the_agent_failed_and_an_action_that_could_not_run_each_fail_there() -> None:
    failed_goal = decide_test(steps_spec(*FOUR), AgentRun(step_runs=[goal(1, report("fail", "No anvil in the shop."))]))
    assert failed_goal.verdict.reason == "step 1 of 4, 'Add the anvil': agent: No anvil in the shop."
    no_element = exact(2, StepKind.CLICK, action_error="no element matches button 'Add'")
    spec = steps_spec({"open": "/"}, {"click": {"role": "button", "name": "Add"}})
    decided = decide_test(spec, AgentRun(step_runs=[exact(1), no_element]))
    assert decided.verdict.reason == "step 2 of 2, \"Click button 'Add'\": no element matches button 'Add'"
    assert decided.steps[1].status is StepStatus.FAILED


def test_a_secret_the_test_tried_to_carry_off_outweighs_every_step() -> None:
    run = AgentRun(step_runs=[goal(1, checks=(True,))], secret_attempts=[SecretAttempt("pw", "evil.test")])
    decision = decide_test(steps_spec(*FOUR[:1]), run)
    assert (decision.verdict.status, decision.verdict.reason) == (
        Status.FAILED,
        "the agent tried to send secret 'pw' to evil.test",
    )


def test_a_step_the_test_stopped_in_errors_with_the_tests_reason() -> None:
    stopped = goal(2)
    stopped.finished = False
    run = AgentRun(step_runs=[exact(1), stopped], infrastructure_error="timed out after 60 s")
    decision = decide_test(steps_spec({"open": "/"}, {"do": "Pay"}, {"open": "/done"}), run)
    assert (decision.verdict.status, decision.verdict.reason) == (Status.ERRORED, "step 2 of 3, 'Pay': timed out after 60 s")
    assert [s.status for s in decision.steps] == [StepStatus.PASSED, StepStatus.ERRORED, StepStatus.NOT_RUN]


def test_a_preview_never_reached_errors_before_any_step() -> None:
    decision = decide_test(steps_spec(*FOUR), AgentRun(infrastructure_error="preview unreachable: refused"))
    assert (decision.verdict.status, decision.verdict.reason) == (Status.ERRORED, "preview unreachable: refused")
    assert {s.status for s in decision.steps} == {StepStatus.NOT_RUN}


def test_the_tests_own_checks_data_and_server_errors_come_after_its_last_step() -> None:
    spec = steps_spec(
        {"open": "/"},
        {"do": "Read the order number"},
        output_schema={"type": "object"},
        expect={"data": {"order": "A-1"}, "text": "Thanks"},
    )
    run = AgentRun(step_runs=[exact(1), goal(2, report(data={"order": "A-2"}))], expectations=[check(True, "Thanks")])
    decision = decide_test(spec, run)
    assert decision.verdict.reason == 'expectation data.order failed: expected "A-1", found "A-2"'
    assert [e.check for e in decision.expectations] == ["text", "data.order"]
    run.step_runs[1] = goal(2, report(data={"order": "A-1"}))
    run.server_errors = [ServerError("POST", "/api/pay", 500, "Clicked 'Pay'")]
    assert decide_test(spec, run).verdict.reason == "POST /api/pay answered 500 after Clicked 'Pay'"


def test_a_one_step_test_passes_as_a_task_and_fails_naming_its_step() -> None:
    decision = decide_test(steps_spec({"do": "Pay", "expect": {"text": "Paid"}}), AgentRun(step_runs=[goal(1, checks=(False,))]))
    assert (
        decision.verdict.reason == "step 1 of 1, 'Pay': expectation text failed: expected visible text 'Cart: 1 item', found no"
    )
    missing = exact(1, StepKind.FILL, action_error="no element matches the field labelled 'Email'")
    fill = {"fill": {"label": "Email", "value": "ada@example.com"}}
    assert decide_test(steps_spec(fill), AgentRun(step_runs=[missing])).verdict.reason == (
        "step 1 of 1, \"Fill the field labelled 'Email' with 'ada@example.com'\": no element matches the field labelled 'Email'"
    )
    passed = decide_test(steps_spec({"do": "Pay"}), AgentRun(step_runs=[goal(1, report(reason="Paid."))]))
    assert passed.verdict.reason == "Paid."


def test_a_drifted_goal_under_heal_false_fails_with_the_drift_and_a_healed_one_marks_the_test() -> None:
    drifted = AgentRun(execution=Execution.REPLAYED, replay_error="agent step 3: click button 'Add': element not found")
    replayed = StepRun(2, StepKind.DO, StepExecution.REPLAY, drifted, drift=drifted.replay_error, finished=True)
    spec = steps_spec(*FOUR, heal=False)
    decision = decide_test(spec, AgentRun(step_runs=[goal(1), replayed]))
    assert decision.verdict.reason == (
        "step 2 of 4, 'Open the cart': replay drifted at agent step 3: click button 'Add': element not found; heal: false, "
        "so the agent did not take over"
    )
    healed = goal(2, drift=drifted.replay_error, fell_back=FallBack.PAGE_CHANGED)
    healed.execution = StepExecution.HEALED
    spec = steps_spec(FOUR[0], {"do": "Add it again"})
    final = final_verdict(Facts(spec, AgentRun(step_runs=[goal(1), healed]), fell_back=FallBack.PAGE_CHANGED))
    assert final.healed and final.drift == (
        "replay drifted at step 2 of 2, 'Add it again', agent step 3: click button 'Add': element not found"
    )
    assert [s.execution for s in final.decision.steps] == [StepExecution.AGENT, StepExecution.HEALED]


def test_a_goal_the_agent_took_over_and_failed_is_not_healed_and_its_drift_names_the_step() -> None:
    """#65, 8: a failed step is never `healed`, and the drift names the manifest's step, not only the agent step."""
    taken_over = goal(5, report("fail", "The Save button is gone"), drift="agent step 1: click button 'Save': not found")
    taken_over.execution, taken_over.fell_back = StepExecution.HEALED, FallBack.PAGE_CHANGED
    spec = steps_spec(*(({"open": f"/p{i}"}) for i in range(1, 5)), {"do": "Save the form", "name": "Save"}, {"do": "x"})
    run = AgentRun(step_runs=[exact(1), exact(2), exact(3), exact(4), taken_over])
    final = final_verdict(Facts(spec, run, fell_back=FallBack.PAGE_CHANGED))
    assert (final.verdict.status, final.healed) == (Status.FAILED, False)
    assert final.decision.steps[4].execution is StepExecution.AGENT
    assert final.drift == "replay drifted at step 5 of 6, 'Save', agent step 1: click button 'Save': not found"


def test_a_task_is_its_own_one_step() -> None:
    spec = TestSpec(name="t", task="Log in\nand check")
    step = task_step(spec, AgentRun(steps=4), Verdict(status=Status.PASSED, reason="ok"), False, 3.456, Usage(llm_calls=4))
    assert (step.index, step.name, step.kind, step.status, step.agent_steps) == (1, "Log in and check", "do", "passed", (1, 4))
    assert (step.execution, step.duration_s, step.usage.llm_calls) == (StepExecution.AGENT, 3.46, 4)
