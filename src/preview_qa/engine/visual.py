"""expect.visual in the run: which screenshots a test's PR run is compared with (its baseline run's, or the default
branch's reference from the replay cache), the recording both runs replay, and the outcome on its result."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from preview_qa.engine.agent_port import Recorded, Recording, StepRecordings
from preview_qa.engine.preview import origin_of
from preview_qa.events import AgentHistory, Event, Observed, VisualCompared, VisualReference
from preview_qa.manifest.models import TestSpec
from preview_qa.results import FINAL_SHOT, Status, TestResult, VisualShot

VISUAL_REPLAY = "visual-replay"  # the label of a PR run's recording replayed for its steps' screenshots (steps: true)
References = Callable[[TestSpec], dict[str, bytes] | None]  # the replay cache's: the default branch's screenshots


def compared_visually(spec: TestSpec, result: TestResult) -> bool:
    """A test with expect.visual that passed on the preview: its screenshots are worth comparing."""
    return spec.expect.visual is not None and result.status is Status.PASSED


def wants_steps(spec: TestSpec, shots: Mapping[str, bytes]) -> bool:
    """steps: true, and the PR's run took no step's screenshot (the agent ran it: only a replay takes them)."""
    return spec.expect.visual is not None and spec.expect.visual.steps and set(shots) <= {FINAL_SHOT}


def recorded(history: AgentHistory, base_url: str, before: Recorded | None = None) -> Recorded:
    """The PR run's agent history as a recording (for the baseline to replay the same steps, for --prove): a task's,
    or one goal's joining the step test's others (`before`)."""
    recording = Recording(origin_of(base_url), history.history, environment=history.environment, visited=history.visited)
    if history.step is None:
        return recording
    goals = dict(before.by_step) if isinstance(before, StepRecordings) else {}
    return StepRecordings({**goals, history.step: recording})


def outcome(
    spec: TestSpec,
    result: TestResult,
    before: Mapping[str, bytes] | None,
    after: Mapping[str, bytes],
    accepted: list[str],
    why_none: str,
) -> tuple[TestResult, list[Event]]:
    """The test's result with its comparisons, and the events that show them (the images; what was not compared)."""
    assert spec.expect.visual is not None
    if before is None or not after:
        reason = why_none if before is None else "this PR's run took no screenshot to compare"
        return result, [_not_compared(spec, reason)]
    from preview_qa.verdict.checks.visual import compare_all, not_compared  # numpy and Pillow: only a run that compares

    images = compare_all(spec.expect.visual, before, after)
    events: list[Event] = [VisualCompared(name=spec.name, images=tuple(images))]
    missing = not_compared(before, after)
    if missing:
        steps = ", ".join(f"step {s}" if s.isdigit() else s for s in missing)
        events.append(_not_compared(spec, f"the default branch has no screenshot of {steps} (its run did not replay them)"))
    visual = [_labelled(spec, i.shot) for i in images]
    return result.model_copy(update={"visual": visual, "visual_accepted": spec.name in accepted}), events


def _labelled(spec: TestSpec, shot: VisualShot) -> VisualShot:
    """A test written as steps compares a screenshot per test step: each named as the reports name that step."""
    if spec.steps is None or not isinstance(shot.step, int) or not 1 <= shot.step <= len(spec.steps):
        return shot
    title = spec.steps[shot.step - 1].title
    short = title if len(title) <= 80 else title[:79] + "…"
    return shot.model_copy(update={"label": f"step {shot.step} of {len(spec.steps)} {short!r}"})


def reference(spec: TestSpec, after: Mapping[str, bytes]) -> VisualReference:
    return VisualReference(name=spec.name, shots=tuple(after.items()))


def _not_compared(spec: TestSpec, reason: str) -> Observed:
    return Observed(name=spec.name, kind="visual_not_compared", error=True, detail={"reason": f"not compared: {reason}"})
