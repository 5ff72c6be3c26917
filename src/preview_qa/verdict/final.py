"""Pure: a test's final verdict composed once from all its facts (its run's decision, a task's or its steps', healing,
saved state, the baseline)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from preview_qa.manifest.models import TestSpec
from preview_qa.results import FallBack, Status, Verdict
from preview_qa.verdict.agent_run import AgentRun
from preview_qa.verdict.decide import Decision, drift_line, not_healed
from preview_qa.verdict.steps import decide_test, steps_drift


@dataclass(frozen=True)
class Facts:
    """Everything a test's final verdict rests on, each gathered once by the runner."""

    spec: TestSpec
    run: AgentRun  # the run that counts: the replay's, or the agent's after the replay fell back to it
    replay: AgentRun | None = None  # a cached recording's replay, when one ran (then `run` too, unless it fell back)
    fell_back: FallBack | None = None  # why the replay handed the test to the agent
    state_read: bool | None = None  # a save_state test's, on the preview: whether its browser state was read
    baseline: Status | None = None  # how the test ended on the baseline deployment, once it ran there


@dataclass(frozen=True)
class Final:
    """A test's final verdict and what its facts make of it beside: healed, its replay's drift, a regression."""

    decision: Decision
    healed: bool
    drift: str | None
    regression: bool | None

    @property
    def verdict(self) -> Verdict:
        return self.decision.verdict


def final_verdict(facts: Facts) -> Final:
    """The run's own verdict (its report, its checks: a failed check outweighs the agent's pass); under `heal: false`
    a replay that did not hold fails as it ended; a passing save_state test whose state was not read errors; a test
    whose replay drifted and whose agent then passed is healed; one that passed on the baseline is a regression."""
    spec, replay = facts.spec, facts.replay
    decision = decide_test(spec, facts.run)
    drift = drift_line(replay.replay_error) if replay is not None and replay.replay_error else steps_drift(spec, facts.run)
    verdict = decision.verdict
    if replay is not None and facts.fell_back is None and not spec.heal:
        verdict = not_healed(verdict, drift)
    if facts.state_read is False and verdict.status is Status.PASSED:
        verdict = Verdict(
            status=Status.ERRORED, reason="the test passed, but its browser state was not saved", causes=[verdict.reason]
        )
    return Final(
        decision=dataclasses.replace(
            decision,
            verdict=verdict,
            unverified=decision.unverified if verdict.status is Status.PASSED else None,
            steered=decision.steered if verdict.status is Status.PASSED else None,
            checked=decision.checked and verdict.status is Status.PASSED,
        ),
        healed=facts.fell_back is FallBack.PAGE_CHANGED and verdict.status is Status.PASSED,
        drift=drift,
        regression=None if facts.baseline is None else facts.baseline is Status.PASSED,
    )
