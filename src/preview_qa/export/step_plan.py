"""A test written as steps as a plan of Playwright operations (pure): its start, then one block per test step (a goal's
recorded agent steps, or its exact action) with that step's checks, then the test's own checks."""

from __future__ import annotations

from typing import Any

from preview_qa.agent.replay.locators import By, Locator
from preview_qa.export.plan import (
    Block,
    Op,
    Operation,
    Plan,
    StepPlan,
    Text,
    agent_steps,
    appeared_assertions,
    comment_text,
    not_appeared_todos,
    page_assertions,
    plan_test,
    secret_envs,
    text_parts,
)
from preview_qa.manifest.models import TestSpec
from preview_qa.manifest.steps import INBOX, WHOLE_SECRET, Located, StepKind, TestStep


def plan_steps(spec: TestSpec, goals: dict[int, dict[str, Any]], origin: str, where: str) -> Plan:
    """The plan of a test written as steps whose every goal passed (`goals`: each one's recording, by test step)."""
    assert spec.steps is not None
    total, before = len(spec.steps), 0
    blocks, unchecked = [], []
    for index, step in enumerate(spec.steps, start=1):
        title = comment_text(f"step {index} of {total}: {step.title}", 200)
        if step.kind is StepKind.DO:
            steps = agent_steps(spec, goals[index], origin, before)
            before = max((s.number for s in steps), default=before)
        else:
            steps = [StepPlan(0, "", [_exact(spec, step)])]
        checks = spec.step_checks(index)
        blocks.append(Block(title, steps, [*appeared_assertions(checks), *page_assertions(checks)]))
        unchecked += not_appeared_todos(checks, f"step {index}: ")
    own = plan_test(spec.model_copy(update={"task": "", "steps": None}), {}, origin, where)  # the test's own checks
    start = StepPlan(0, "", [Operation(Op.GOTO, 0, text=[spec.start])])
    plan = Plan(spec.name, where, [start], own.assertions, [*unchecked, *own.unchecked], 0, blocks)
    todos = sum(1 for o in plan.operations if o.op is Op.TODO) + len(plan.unchecked)
    return Plan(plan.test, where, plan.steps, plan.assertions, plan.unchecked, todos, blocks)


def _exact(spec: TestSpec, step: TestStep) -> Operation:
    """An exact step as the one Playwright call it is (the same locator it ran with)."""
    match step.kind:
        case StepKind.OPEN:
            return Operation(Op.GOTO, 0, text=[step.open or ""])
        case StepKind.CLICK:
            assert step.click is not None
            return Operation(Op.CLICK, 0, _locator(step.click))
        case StepKind.FILL:
            assert step.fill is not None
            return _fill(spec, step.fill.value, _locator(step.fill))
        case StepKind.SELECT:
            assert step.select is not None
            return Operation(Op.SELECT, 0, _locator(step.select), [step.select.option])
        case StepKind.EMAIL:
            assert step.email is not None
            said = f"open the newest mail to that address with subject {step.email.subject!r} from your mail catcher's API"
            return Operation(Op.TODO, 0, note=f"{said} (page.set_content of its HTML), as preview-qa's email step does")
    assert step.press is not None
    if not step.press.given:
        return Operation(Op.PRESS, 0, text=[step.press.key])
    return Operation(Op.PRESS_ON, 0, _locator(step.press), [step.press.key])


def _fill(spec: TestSpec, value: str, locator: Locator) -> Operation:
    """A fill, its secret read from its environment variable; a TOTP seed's current code is for a person to write."""
    secret = WHOLE_SECRET.fullmatch(value)
    if INBOX in value:
        return Operation(Op.TODO, 0, note=f"fill in a fresh address your mail catcher receives, where preview-qa typed {INBOX}")
    if secret is not None and spec.is_totp(secret.group(1)):
        env = spec.secret_env(secret.group(1))
        return Operation(Op.TODO, 0, note=f"type a fresh 2FA code from the seed in {env}, e.g. with pyotp.TOTP(seed).now()")
    text: Text = [value]
    if secret is not None:
        text = text_parts(f"<secret>{spec.agent_placeholder(secret.group(1))}</secret>", secret_envs(spec))
    return Operation(Op.FILL, 0, locator, text)


def _locator(at: Located) -> Locator:
    """The step's own locator: by role and name, label, text, CSS selector or test id, exact only if the step says so."""
    if at.role is not None:
        return Locator(By.ROLE, at.role, at.name, exact=at.exact)
    if at.label is not None:
        return Locator(By.LABEL, at.label, exact=at.exact)
    if at.css is not None:
        return Locator(By.CSS, at.css)
    if at.test_id is not None:
        return Locator(By.TEST_ID, at.test_id, "data-testid")
    return Locator(By.TEXT, at.text or "", exact=at.exact)
