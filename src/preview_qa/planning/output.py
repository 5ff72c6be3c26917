"""Pure: the plan as manifest YAML a reviewer reads: the drafts that passed their trial, each with a comment (route,
changed files, trial and proof results), then what was not proposed and why, as comments."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml

from preview_qa.manifest.models import TestSpec
from preview_qa.results import one_line

PROOF_NOT_RUN = "not proven (--prove not run)"


@dataclass(frozen=True)
class Proposed:
    """A draft that passed its trial: its test, where it came from, and its results in words."""

    spec: TestSpec
    route: str
    files: tuple[str, ...]
    run: str  # e.g. "passed (agent, 3 steps, 4.2 s)"
    proof: str = PROOF_NOT_RUN


@dataclass
class PlanText:
    """What the YAML says beside its tests."""

    base_url: str
    proposed: list[Proposed] = field(default_factory=list)
    dropped: dict[str, str] = field(default_factory=dict)  # draft name -> why
    notes: list[str] = field(default_factory=list)  # unmapped files, covered routes, routes without a value...
    logins: list[dict[str, Any]] = field(default_factory=list)  # the login tests the drafts start from, as written
    drafted_by: str = "preview-qa plan"  # the command, in the header
    given: str = "changed: given with --route"  # where a route no changed file maps to came from


def render(plan: PlanText, defaults: dict[str, Any] | None = None) -> str:
    """The manifest YAML (valid under the schema when it proposes a test; empty when it proposes none), with the
    manifest's `defaults` so that it runs alone as it ran in its trial."""
    if not plan.proposed:
        return ""
    lines = [
        _comment(f"Drafted by `{plan.drafted_by}` against {plan.base_url}: each test below ran once there and passed."),
        _comment("Review each one before you commit it: a draft checks what the page shows now, not what it should."),
        *[_comment(note) for note in plan.notes],
        "version: 1",
        *([_dump({"defaults": defaults}).rstrip("\n")] if defaults else []),
        "tests:",
    ]
    for login in plan.logins:
        state = login.get("save_state")
        why = f"from your manifest, unchanged: the login the drafts below start from ({state}); paste only the drafts"
        lines.append(_comment(why, "  "))
        lines += ["  " + line for line in _dump([login]).splitlines()]
    for p in plan.proposed:
        lines.append(_comment(f"route: {p.route} ({'changed: ' + ', '.join(p.files) if p.files else plan.given})", "  "))
        lines.append(_comment(f"run: {p.run}; proof: {p.proof}", "  "))
        lines += ["  " + line for line in _test_yaml(p.spec).splitlines()]
    if plan.dropped:
        lines.append(_comment("Drafts not proposed (a draft that failed may have found a regression the PR brought):"))
        lines += [_comment(f"- {name}: {why}") for name, why in plan.dropped.items()]
    return "\n".join(lines) + "\n"


def _test_yaml(spec: TestSpec) -> str:
    data = {"start": spec.start} | spec.model_dump(mode="json", exclude_defaults=True, exclude={"line"})  # `/` too
    ordered = {k: data[k] for k in ("name", "app", "start", "task", "secrets", "expect", "tags") if k in data}
    return _dump([ordered | data])


class _OneLineDumper(yaml.SafeDumper):
    """Every string on its own line: a page's text with line breaks is written double-quoted, its breaks escaped, so
    that no line of the plan starts with text from the page (printed, `::command::` would be a workflow command)."""


def _one_line_str(dumper: yaml.SafeDumper, text: str) -> yaml.Node:
    multi = any(c in text for c in "\n\r\x85\u2028\u2029")
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style='"' if multi else None)


def _number(dumper: yaml.SafeDumper, value: float) -> yaml.Node:
    """A whole number as the manifest writes it (`timeout: 120`, which its JSON dump makes 120.0)."""
    return dumper.represent_int(int(value)) if value.is_integer() else dumper.represent_float(value)


_OneLineDumper.add_representer(str, _one_line_str)
_OneLineDumper.add_representer(float, _number)


def _dump(value: Any) -> str:
    return yaml.dump(value, Dumper=_OneLineDumper, sort_keys=False, allow_unicode=True, width=1_000_000)


def _comment(text: str, indent: str = "") -> str:
    """One YAML comment line: the text on one line (a newline in page text would end the comment)."""
    return f"{indent}# {one_line(text, 500)}"
