"""A test written as steps in the replay cache (pure): what defines one goal's recording (the test's key, plus the
steps up to it), which goals a finished run may keep, and which pages the test visits (run --impacted, plan)."""

from __future__ import annotations

from typing import Any

from preview_qa.engine.agent_port import Recorded, StepRecordings
from preview_qa.manifest.models import TestSpec
from preview_qa.manifest.steps import StepKind
from preview_qa.results import StepResult, StepStatus

# The ways to find an element each exact action gained after its recordings were keyed (#65, 11: css and test_id for
# all; role, name and text for select and press), left out of a key while unused so no recording is lost to them.
_NEW = ("css", "test_id")
LOCATORS_ADDED = {
    "click": _NEW,
    "fill": _NEW,
    "select": ("role", "name", "text", *_NEW),
    "press": ("role", "name", "text", *_NEW),
}


def goal_definition(spec: TestSpec, index: int) -> dict[str, Any]:
    """What a goal's key covers besides the run's own (provider, model, versions, emulation): where the test starts,
    where it may go, its secrets' names, and the steps up to this goal: each one's action and checks (not its name nor
    how long its checks wait, which change nothing the agent does); the last goal also its data's schema."""
    test = spec.model_dump(mode="json", include={"start", "allowed_domains", "secrets"})
    steps = spec.model_dump(mode="json", include={"steps"}, exclude={"steps": {"__all__": {"name": True}}})["steps"]
    for step in steps[:index]:
        step["expect"] = {k: v for k, v in step["expect"].items() if k not in ("timeout", "data", "accessibility", "visual")}
        for kind, added in LOCATORS_ADDED.items():  # a step that uses none of them keeps the key it had
            if isinstance(step.get(kind), dict):
                step[kind] = {k: v for k, v in step[kind].items() if k not in added or v is not None}
    test["steps"] = steps[:index]
    if index == spec.data_step:
        test["output_schema"] = spec.output_schema
    return test


def recordable_goals(spec: TestSpec, steps: list[StepResult], test_passed: bool) -> list[int]:
    """The goals (test steps, from 1) a run may keep: passed, and checked: by their own checks, or, for a goal without
    any, by a later step's that held (or by the test's pass)."""
    assert spec.steps is not None
    found = []
    for index, step in enumerate(spec.steps, start=1):
        result = steps[index - 1] if index <= len(steps) else None
        if step.kind is not StepKind.DO or result is None or result.status is not StepStatus.PASSED:
            continue
        later = [i for i in range(index + 1, len(spec.steps) + 1) if spec.step_checks(i).has_page_checks]
        checked_later = any(i <= len(steps) and steps[i - 1].status is StepStatus.PASSED for i in later)
        if spec.step_checks(index).has_page_checks or checked_later or test_passed:
            found.append(index)
    return found


def opened(spec: TestSpec) -> list[str]:
    """The pages a test written as steps opens by its `open` steps (their paths): it visits them, recorded or not."""
    return [step.open for step in spec.steps or [] if step.open is not None]


def steps_visited(spec: TestSpec, found: Recorded | object) -> list[str] | None:
    """The pages a test written as steps visits, as its goals' recordings kept them (each its whole test's run's),
    with the pages it opens; None (no recording: it runs) unless every goal of it has one, as a test of exact steps
    only never has."""
    goals = [i for i, step in enumerate(spec.steps or [], start=1) if step.kind is StepKind.DO]
    if not isinstance(found, StepRecordings) or not goals or any(i not in found.by_step for i in goals):
        return None
    return list(dict.fromkeys([*(page for i in goals for page in found.by_step[i].pages()), *opened(spec)]))
