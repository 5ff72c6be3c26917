"""A test's steps as its events.jsonl tells them, each action in words: `click button "Sign in"`, index as a detail."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from preview_qa.reporters.output.files import EVENTS, last_run_dir
from preview_qa.results import TestResult, clip

TEXT_LIMIT = 300


@dataclass(frozen=True)
class ActionLine:
    """One action: what it did to which element (`text`), and the index browser-use gave that element (`detail`)."""

    text: str
    detail: str = ""

    def __str__(self) -> str:
        return f"{self.text} ({self.detail})" if self.detail else self.text


@dataclass
class Dropped:
    why: str
    actions: list[ActionLine]


@dataclass
class Step:
    number: int
    goal: str
    url: str
    error: str | None
    actions: list[ActionLine] = field(default_factory=list)
    dropped: list[Dropped] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)  # `confirm 'Delete Anvil?': ok`, as they were answered


def read_events(out: Path, test: TestResult) -> list[dict[str, Any]]:
    """The events.jsonl of the test's last run under `out` (if there is one), skipping a line a crash cut short."""
    path = out / last_run_dir(out, test) / EVENTS
    if not path.is_file():
        return []
    lines = []
    for text in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            line = json.loads(text)
        except ValueError:
            continue
        if isinstance(line, dict):
            lines.append(line)
    return lines


def steps_of(events: list[dict[str, Any]]) -> list[Step]:
    """The steps, in order, each with its actions named and the actions that never ran."""
    steps: dict[int, Step] = {}
    for line in events:
        if line.get("type") == "step":
            number = _int(line.get("number"))
            steps[number] = Step(number=number, goal=clip(str(line.get("goal") or ""), TEXT_LIMIT),
                                 url=str(line.get("url") or ""),
                                 error=clip(str(line["result_error"]), TEXT_LIMIT) if line.get("result_error") else None,
                                 actions=_actions(line))
        elif line.get("type") == "actions_dropped" and _int(line.get("step")) in steps:
            steps[_int(line.get("step"))].dropped.append(Dropped(why=clip(str(line.get("why") or ""), TEXT_LIMIT),
                                                                 actions=_actions(line)))
    for line in events:  # a dialog is logged while its step runs, before the step's own record
        if line.get("type") == "dialog" and _int(line.get("step")) in steps:
            steps[_int(line.get("step"))].dialogs.append(clip(
                f"{line.get('dialog')} {str(line.get('message') or '')!r}: {line.get('answer')}", TEXT_LIMIT))
    return list(steps.values())


def step_lines(steps: list[Step]) -> list[str]:
    """Plain text, one step after another, for a code block in Markdown."""
    lines = []
    for step in steps:
        lines.append(f"Step {step.number}{': ' + step.goal if step.goal else ''}{' → ' + step.url if step.url else ''}")
        lines += [f"  - {a}" for a in step.actions]
        if step.error:
            lines.append(f"  error: {step.error}")
        lines += [f"  dialog: {d}" for d in step.dialogs]
        for dropped in step.dropped:
            lines.append(f"  not run ({dropped.why}):")
            lines += [f"    - {a}" for a in dropped.actions]
    return lines


def describe_action(action: dict[str, Any], element: dict[str, Any] | None) -> ActionLine:
    """`click button "Sign in"` with detail `index 7`; the element's role and accessible name, else its index only."""
    name, params = next(iter(action.items()), ("unknown", {}))
    params = params if isinstance(params, dict) else {"value": params}
    index = params.get("index")
    words = [str(name)]
    if element:
        label = str(element.get("name") or "")
        words.append(str(element.get("role") or element.get("tag") or "element")
                     + (f" {json.dumps(label, ensure_ascii=False)}" if label else ""))
    elif index is not None:
        words.append("an unnamed element")
    rest = {k: v for k, v in params.items() if k != "index"}
    if rest:
        words.append(json.dumps(rest, ensure_ascii=False))
    return ActionLine(clip(" ".join(words), TEXT_LIMIT), f"index {index}" if index is not None else "")


def _actions(line: dict[str, Any]) -> list[ActionLine]:
    actions = [a for a in line.get("actions") or [] if isinstance(a, dict)]
    elements = list(line.get("elements") or [])
    elements += [None] * (len(actions) - len(elements))
    return [describe_action(a, e if isinstance(e, dict) else None) for a, e in zip(actions, elements, strict=False)]


def _int(value: Any) -> int:
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0
