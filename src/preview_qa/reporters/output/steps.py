"""A test's steps as its events.jsonl tells them, each action in words (`Clicked button 'Sign in'`), index as a detail."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from preview_qa.events import ActionsDropped, DialogAnswered
from preview_qa.results import StepInWords, clip

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


def steps_of(events: list[dict[str, Any]]) -> list[Step]:
    """The steps, in order, each with its actions named and the actions that never ran."""
    steps: dict[int, Step] = {}
    for line in events:
        if line.get("type") == "step":
            number = _int(line.get("number"))
            steps[number] = Step(
                number=number,
                goal=clip(str(line.get("goal") or ""), TEXT_LIMIT),
                url=str(line.get("url") or ""),
                error=clip(str(line["result_error"]), TEXT_LIMIT) if line.get("result_error") else None,
                actions=_actions(line),
            )
    # A dialog is logged while its step runs, and the actions a step dropped as it ends: both may come before the
    # step's own record, which is logged once the next step's capture pictured where the step led (agent/adapter/history.py).
    for line in events:
        if (dropped := ActionsDropped.read(line)) is not None and dropped.step in steps:
            steps[dropped.step].dropped.append(Dropped(why=clip(dropped.why, TEXT_LIMIT), actions=_actions(line)))
        elif (dialog := DialogAnswered.read(line)) is not None and dialog.step in steps:
            steps[dialog.step].dialogs.append(clip(dialog.words(), TEXT_LIMIT))
    return list(steps.values())


def in_words(steps: list[Step]) -> list[StepInWords]:
    """The steps as results.json and the failure card tell them (screenshots are added by who knows the folder); a
    dialog the step opened is told after its actions."""
    return [
        StepInWords(
            number=s.number,
            actions=[a.text for a in s.actions] + [f"Answered {d}" for d in s.dialogs],
            page=s.url,
            error=s.error,
            not_run=[f"{a.text} (not run: {d.why})" for d in s.dropped for a in d.actions],
        )
        for s in steps
    ]


def describe_action(action: dict[str, Any], element: dict[str, Any] | None) -> ActionLine:
    """`Clicked button 'Sign in'` with detail `index 7`: what the action did, to the element's role and accessible name
    (else "an unnamed element"), in words; never the action's JSON."""
    name, params = next(iter(action.items()), ("unknown", {}))
    params = params if isinstance(params, dict) else {"value": params}
    index = params.get("index")
    target = _element(element) if element else ("an unnamed element" if index is not None else "")
    words = _WORDS.get(str(name), _generic)(str(name), {k: v for k, v in params.items() if k != "index"}, target)
    return ActionLine(clip(words, TEXT_LIMIT), f"index {index}" if index is not None else "")


def _element(element: dict[str, Any]) -> str:
    label = _value(element.get("name") or "")
    kind = str(element.get("role") or element.get("tag") or "element")
    return f"{kind} {label}" if label else kind


def _value(value: Any, limit: int = 80) -> str:
    """A parameter as a reader sees it: text quoted, numbers and words plain, anything nested left out."""
    if isinstance(value, bool) or value is None:
        return ""
    if isinstance(value, int | float):
        return f"{value:g}"
    if isinstance(value, str):
        return f"'{clip(' '.join(value.split()), limit)}'" if value else ""
    return ""


def _on(target: str) -> str:
    return f" {target}" if target else ""


def _done(_name: str, params: dict[str, Any], _target: str) -> str:
    data = params.get("data")
    status = data.get("status") if isinstance(data, dict) else None
    if isinstance(status, str) and status:
        return f"Reported: {clip(status, 40)}"
    return "Reported: done" if params.get("success") is not False else "Reported: could not finish"


def _scroll(_name: str, params: dict[str, Any], target: str) -> str:
    pages = params.get("pages")
    amount = f" {pages:g} page(s)" if isinstance(pages, int | float) and not isinstance(pages, bool) else ""
    return f"Scrolled {'down' if params.get('down', True) else 'up'}{amount}{' in ' + target if target else ''}"


def _generic(name: str, params: dict[str, Any], target: str) -> str:
    """An action without words of its own: its name and its plain parameters."""
    shown = [f"{k} {v}" for k, v in ((k, _value(v)) for k, v in params.items()) if v]
    return f"Ran {name.replace('_', ' ')}{_on(target)}" + (f" ({', '.join(shown)})" if shown else "")


_WORDS: dict[str, Callable[[str, dict[str, Any], str], str]] = {
    "click": lambda n, p, t: (
        f"Clicked{_on(t)}" if t else f"Clicked at ({_value(p.get('coordinate_x'))}, {_value(p.get('coordinate_y'))})"
    ),
    "input": lambda n, p, t: f"Typed {_value(p.get('text')) or 'nothing'} into{_on(t) or ' the focused element'}",
    "navigate": lambda n, p, t: f"Opened {_value(p.get('url'), 200)}" + (" in a new tab" if p.get("new_tab") else ""),
    "go_back": lambda n, p, t: "Went back",
    "wait": lambda n, p, t: f"Waited {_value(p.get('seconds', 3))} s",
    "scroll": _scroll,
    "send_keys": lambda n, p, t: f"Pressed {_value(p.get('keys'))}",
    "search": lambda n, p, t: f"Searched the web for {_value(p.get('query'))}",
    "search_page": lambda n, p, t: f"Searched the page for {_value(p.get('pattern'))}",
    "find_text": lambda n, p, t: f"Looked for the text {_value(p.get('text'))}",
    "find_elements": lambda n, p, t: f"Looked for elements {_value(p.get('selector'))}",
    "extract": lambda n, p, t: f"Read the page for {_value(p.get('query'))}",
    "select_dropdown": lambda n, p, t: f"Chose {_value(p.get('text'))} in{_on(t) or ' a list'}",
    "dropdown_options": lambda n, p, t: f"Listed the options of{_on(t) or ' a list'}",
    "upload_file": lambda n, p, t: f"Uploaded {_value(p.get('path'))} to{_on(t) or ' a file input'}",
    "switch": lambda n, p, t: f"Switched to tab {_value(p.get('tab_id'))}",
    "close": lambda n, p, t: f"Closed tab {_value(p.get('tab_id'))}",
    "screenshot": lambda n, p, t: "Took a screenshot",
    "evaluate": lambda n, p, t: "Ran JavaScript on the page",
    "done": _done,
}


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
