"""Workflow commands as the runner reads them: escaped messages and properties, annotations within the runner's
limits, and $GITHUB_OUTPUT in a form no value can break out of."""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from preview_qa.reporters.junit import clean
from preview_qa.reporters.output.files import JUNIT, RESULTS
from preview_qa.results import ProofVerdict, RunResult, Status, clip

ERRORS_PER_STEP = 10  # the runner shows at most 10 error annotations per step (and 50 per job)
ANNOTATION_LIMIT = 4096  # the runner cuts an annotation's message there, silently; ours end with a visible "…"


def in_github_actions(env: Mapping[str, str]) -> bool:
    return env.get("GITHUB_ACTIONS") == "true"


def escape_data(text: str) -> str:
    """A workflow command's message: the runner unescapes %25, %0D and %0A, so nothing can end the line early."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A workflow command's property value: additionally `:` and `,`, which would end the value."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(name: str, message: str = "", **properties: str | int | None) -> str:
    """A workflow command; empty properties (None, "", 0) are left out, as @actions/core leaves them out."""
    props = ",".join(f"{key}={escape_property(str(value))}" for key, value in properties.items() if value)
    return f"::{name}{' ' + props if props else ''}::{escape_data(message)}"


def annotation(level: str, message: str, **properties: str | int | None) -> str:
    """An error/warning/notice: control characters cleaned, the message clipped where the runner would cut it."""
    cleaned = {key: clean(value) if isinstance(value, str) else value for key, value in properties.items()}
    return command(level, clip(clean(message), ANNOTATION_LIMIT), **cleaned)


def error_annotations(run: RunResult, relative: Any) -> list[str]:
    """One error per failed/errored test (manifest order), a run-level one instead of N identical ones, within limits."""
    failing = [t for t in run.tests if not t.status.is_green]
    shared = [t for t in failing if run.notice and t.reason == run.notice]
    lines = []
    if shared and run.notice:
        lines.append(
            annotation(
                "error",
                f"{len(shared)} test(s) did not run: {run.notice}",
                file=relative(run.manifest),
                title=f"preview-qa: {run.notice.split(':')[0]}",
            )
        )
    for test in failing:
        if test not in shared:
            lines.append(annotation("error", test.reason, file=relative(test.file), line=test.line, title=test.name))
    if len(lines) > ERRORS_PER_STEP:
        more = len(lines) - ERRORS_PER_STEP
        lines = lines[:ERRORS_PER_STEP]
        lines.append(
            annotation(
                "warning",
                f"{more} more failed or errored test(s) are listed in the job summary.",
                file=relative(run.manifest),
                title="preview-qa: more failures",
            )
        )
    return lines


def outputs(run: RunResult, out: Path) -> str:
    """The run's counts and paths as step outputs (the exit code is the CLI's: it is known last)."""
    values = {s.value: str(run.count(s)) for s in (Status.PASSED, Status.FAILED, Status.ERRORED, Status.SKIPPED)}
    values |= {
        "total": str(len(run.tests)),
        "flaky": str(len(run.flaky)),
        "healed": str(len(run.healed)),
        "changed": str(len(run.changed)),
        "vacuous": str(len(run.proved(ProofVerdict.VACUOUS))),
        "unverified": str(len(run.unverified)),
        "regressions": str(len(run.regressions)),
        "results-path": str(out / RESULTS),
        "junit-path": str(out / JUNIT),
    }
    return output_text(values)


def output_text(values: dict[str, str]) -> str:
    """Step outputs as $GITHUB_OUTPUT takes them, in the delimiter form, which no value can break out of."""
    text = ""
    for name, value in values.items():
        delimiter = f"ghadelimiter_{secrets.token_hex(16)}"
        text += f"{name}<<{delimiter}\n{value}\n{delimiter}\n"
    return text


def append_outputs(env: Mapping[str, str], values: dict[str, str]) -> None:
    """In GitHub Actions, step outputs appended to $GITHUB_OUTPUT (OSError if it could not be written); elsewhere none."""
    target = env.get("GITHUB_OUTPUT")
    if in_github_actions(env) and target:
        with open(target, "a", encoding="utf-8") as f:
            f.write(output_text(values))
