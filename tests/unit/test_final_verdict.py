"""A test's final verdict is composed once, by one pure function, from its facts (verdict/decide.final_verdict): each
fact's effect on it, without a browser or a runner."""

from __future__ import annotations

import pytest

from preview_qa.results import Execution, ExpectationOutcome, FallBack, Status, Verdict
from preview_qa.verdict.agent_run import AgentRun
from preview_qa.verdict.final import Facts, final_verdict
from tests.builders import PASS, spec

CHECK = ExpectationOutcome(check="url", expected="URL containing '/done'", found="http://p/cart", ok=False)
DRIFTED = AgentRun(execution=Execution.REPLAYED, replay_error="step 2: click button 'Add': element not found")
FAILED_CHECK = AgentRun(done=PASS, expectations=[CHECK])
TEST = spec("t", expect={"url": "/done"})


def test_the_runs_own_verdict_when_no_other_fact_is_known() -> None:
    final = final_verdict(Facts(TEST, AgentRun(done=PASS)))
    assert final.verdict == Verdict(status=Status.PASSED, reason="fine")
    assert (final.healed, final.drift, final.regression) == (False, None, None)


def test_a_failed_check_overrules_the_agents_pass() -> None:
    final = final_verdict(Facts(TEST, FAILED_CHECK))
    assert final.verdict.status is Status.FAILED
    assert final.verdict.reason == "expectation url failed: expected URL containing '/done', found http://p/cart"
    assert final.verdict.causes == ["the agent said pass: fine"]
    assert final.decision.expectations == [CHECK]


def test_a_drifted_replay_the_agent_then_passed_is_healed_with_its_drift_kept() -> None:
    final = final_verdict(Facts(TEST, AgentRun(done=PASS), replay=DRIFTED, fell_back=FallBack.PAGE_CHANGED))
    assert (final.verdict.status, final.healed) == (Status.PASSED, True)
    assert final.drift == "replay drifted at step 2: click button 'Add': element not found"


@pytest.mark.parametrize("cause", [FallBack.LLM_ANSWER, FallBack.TOOL])
def test_a_fall_back_for_anything_but_a_changed_page_passes_without_being_healed(cause: FallBack) -> None:
    replay = AgentRun(execution=Execution.REPLAYED)
    final = final_verdict(Facts(TEST, AgentRun(done=PASS), replay=replay, fell_back=cause))
    assert (final.verdict.status, final.healed, final.drift) == (Status.PASSED, False, None)


def test_a_fall_back_the_agent_failed_too_is_not_healed() -> None:
    final = final_verdict(Facts(TEST, FAILED_CHECK, replay=DRIFTED, fell_back=FallBack.PAGE_CHANGED))
    assert (final.verdict.status, final.healed) == (Status.FAILED, False)


def test_under_heal_false_a_drifted_replay_fails_with_its_drift_and_is_never_healed() -> None:
    gate = spec("t", expect={"url": "/done"}, heal=False)
    final = final_verdict(Facts(gate, DRIFTED, replay=DRIFTED))
    assert final.verdict.status is Status.FAILED and not final.healed
    assert final.verdict.reason == (
        "replay drifted at step 2: click button 'Add': element not found; heal: false, so the agent did not take over"
    )
    assert final.verdict.causes[0] == "replay drifted at step 2: click button 'Add': element not found"


def test_under_heal_false_a_replay_that_errored_stays_an_error_with_its_cause() -> None:
    gate = spec("t", expect={"url": "/done"}, heal=False)
    broken = AgentRun(execution=Execution.REPLAYED, infrastructure_error="the browser crashed")
    final = final_verdict(Facts(gate, broken, replay=broken))
    assert final.verdict == Verdict(status=Status.ERRORED, reason="the browser crashed")


def test_a_passing_setup_test_whose_state_was_not_read_errors() -> None:
    final = final_verdict(Facts(TEST, AgentRun(done=PASS), state_read=False))
    assert final.verdict == Verdict(
        status=Status.ERRORED, reason="the test passed, but its browser state was not saved", causes=["fine"]
    )


def test_a_state_not_read_leaves_a_failure_as_it_is_and_a_read_one_leaves_the_pass() -> None:
    assert final_verdict(Facts(TEST, FAILED_CHECK, state_read=False)).verdict == final_verdict(Facts(TEST, FAILED_CHECK)).verdict
    assert final_verdict(Facts(TEST, AgentRun(done=PASS), state_read=True)).verdict.status is Status.PASSED


@pytest.mark.parametrize(
    ("baseline", "regression"), [(Status.PASSED, True), (Status.FAILED, False), (Status.ERRORED, False), (None, None)]
)
def test_the_baselines_outcome_says_whether_a_failure_is_a_regression_and_leaves_the_verdict(
    baseline: Status | None, regression: bool | None
) -> None:
    final = final_verdict(Facts(TEST, FAILED_CHECK, baseline=baseline))
    assert final.regression is regression
    assert final.verdict == final_verdict(Facts(TEST, FAILED_CHECK)).verdict
