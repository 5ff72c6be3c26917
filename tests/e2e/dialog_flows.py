"""The dialog flows of the moving pages (tests/site/moving.py): an alert, a confirm, a prompt answered with text and
one cancelled, a beforeunload; each as manifest tests, the scripted agent's turns, and what its events and evidence
must show. Run by tests/e2e/test_moving_pages.py (the agent at concurrency, a replay) and test_remote_browser.py (in a
browser reached over CDP)."""

from __future__ import annotations

import json
from typing import Any

from tests.conftest import CliRun

DONE = {"done": {"status": "pass", "reason": "It worked."}}
DIALOG_FLOWS = {  # name -> (start, manifest lines, the agent's actions before done)
    "alert": ("/moving/invite", "expect: {text: Invite acknowledged}", [{"click": {"element": "Invite Ada"}}]),
    "confirm": (
        "/moving/delete",
        "expect: {text: [Anvil deleted], not_text: [Delete cancelled]}",
        [{"click": {"element": "Delete Anvil"}}],
    ),
    "prompt with text": (
        "/moving/rename",
        "expect: {text: 'Name: Ada'}\n    dialogs: {prompt: Ada}",
        [{"click": {"element": "Rename"}}],
    ),
    "prompt": ("/moving/rename", "expect: {text: Rename cancelled}", [{"click": {"element": "Rename"}}]),
    "beforeunload": (
        "/moving/editor",
        "expect: {text: You left the editor}",
        [{"click": {"element": "Edit draft"}}, {"click": {"element": "Go home"}}],
    ),
}
ANSWERS = {
    "alert": ("alert", "Invite sent to Ada", "ok"),
    "confirm": ("confirm", "Delete Anvil?", "ok"),
    "prompt with text": ("prompt", "New name?", "text"),
    "prompt": ("prompt", "New name?", "cancel"),
    "beforeunload": ("beforeunload", "", "leave"),
}


def dialog_tests(copies: int) -> str:
    """The manifest's test entries: `copies` of each flow, named "<flow> <n>"."""
    return "".join(
        f"""  - name: {flow} {n}
    task: "[{flow}] Do it ({n})."
    start: {start}
    {lines}
"""
        for flow, (start, lines, _) in DIALOG_FLOWS.items()
        for n in range(1, copies + 1)
    )


def dialog_scenarios() -> list[dict[str, Any]]:
    """The scripted agent's turns for each flow: its actions, then done."""
    return [
        {"match": f"[{flow}]", "turns": [*({"actions": [a]} for a in actions), DONE]}
        for flow, (_, _, actions) in DIALOG_FLOWS.items()
    ]


def events(run: CliRun, name: str) -> list[dict[str, Any]]:
    t = run.test(name)
    return [json.loads(line) for line in (run.out / t["artifacts"]["events"]).read_text(encoding="utf-8").splitlines()]


def answered_as_asked(run: CliRun, flow: str, name: str) -> None:
    """The test's one dialog was answered as the rule says, is an event with its type and message, and shows in the
    evidence of the step that opened it (results.json's steps in words, as the failure card and the report tell it)."""
    dialogs = [(e["dialog"], e["message"], e["answer"]) for e in events(run, name) if e["type"] == "dialog"]
    assert dialogs == [ANSWERS[flow]], dialogs
    kind, message, answer = ANSWERS[flow]
    evidence = [action for step in run.test(name)["steps_in_words"] for action in step["actions"]]
    assert f"Answered {kind} {message!r}: {answer}" in evidence, evidence
