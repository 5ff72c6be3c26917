"""Export: a passing test's recording and its `expect:` written as an ordinary Playwright test (pure generators)."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from preview_qa.export import python, typescript
from preview_qa.export.plan import plan_test
from preview_qa.export.step_plan import plan_steps
from preview_qa.manifest.models import TestSpec


class Language(StrEnum):
    """What the exported test is written for."""

    PYTHON = "python"  # pytest-playwright
    TS = "ts"  # @playwright/test


def export_test(
    spec: TestSpec,
    history: dict[str, Any],
    origin: str,
    where: str,
    language: Language,
    goals: dict[int, dict[str, Any]] | None = None,
) -> str:
    """The source text of the test that does what the recording did and asserts what `expect:` checks; `origin` is
    the preview the recording was made on (its URLs become paths under the runner's base URL). A test written as
    steps: each step in a block of its own, a goal from its own recording (`goals`, by test step)."""
    plan = plan_test(spec, history, origin, where) if spec.steps is None else plan_steps(spec, goals or {}, origin, where)
    return (python.render if language is Language.PYTHON else typescript.render)(plan)


def file_name(test: str, language: Language) -> str:
    """test_<name>.py for pytest to collect, <name>.spec.ts for Playwright Test's default testMatch."""
    words = python.function_name(test).removeprefix("test_")
    return f"test_{words}.py" if language is Language.PYTHON else f"{words.replace('_', '-')}.spec.ts"
