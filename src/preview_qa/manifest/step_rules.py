"""The loader's rules for a test written as steps that no single key can check: where its secrets are used, a literal
URL it opens, and where its data is read."""

from __future__ import annotations

from urllib.parse import urlsplit

from preview_qa.manifest.models import TestSpec
from preview_qa.manifest.yaml_source import Loc


def step_texts(test: TestSpec, at: Loc) -> list[tuple[Loc, str]]:
    """Each text of the test's steps that may hold a secret's placeholder, with its key: goals and fill values."""
    found: list[tuple[Loc, str]] = []
    for j, step in enumerate(test.steps or []):
        if step.do is not None:
            found.append(((*at, "steps", j, "do"), step.do))
        if step.fill is not None:
            found.append(((*at, "steps", j, "fill", "value"), step.fill.value))
    return found


def steps_problem(test: TestSpec, at: Loc) -> tuple[Loc, str] | None:
    """The first thing wrong with the test's steps as a whole (its key, and the sentence that says so), or None."""
    if test.steps is None:
        return None
    hosts = set(test.allowed_domains) | ({urlsplit(test.start).hostname or ""} if "://" in test.start else set())
    for j, step in enumerate(test.steps):
        host = urlsplit(step.open).hostname if step.open is not None and "://" in step.open else None
        if host is not None and host not in hosts:
            return (
                (*at, "steps", j, "open"),
                f"{step.open!r} is outside the preview and this test's allowed_domains; open a path (such as /cart) "
                f"under the preview, or add {host} to allowed_domains.",
            )
    if test.data_step is None and (test.output_schema is not None or test.expect.data):
        key = "output_schema" if test.output_schema is not None else "expect"
        return (
            (*at, key),
            "the test's data is read by its last `do` step (the agent's report), and this test has no do step; "
            "check the page with expect's page checks instead.",
        )
    return None
