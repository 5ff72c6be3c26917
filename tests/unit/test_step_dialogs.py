"""A dialog shows in the evidence of the step that opened it: in the steps in words (results.json, the failure card)
and the report."""

from __future__ import annotations

from preview_qa.reporters.output.steps import in_words, steps_of

EVENTS = [
    {"type": "dialog", "dialog": "confirm", "message": "Delete Anvil?", "answer": "ok", "step": 1},
    {"type": "step", "number": 1, "goal": "delete", "url": "http://x/moving/delete", "actions": []},
    {"type": "dialog", "dialog": "prompt", "message": "New name?", "answer": "cancel", "step": None},  # before any step
]


def test_a_dialog_is_listed_under_the_step_that_opened_it() -> None:
    steps = steps_of(EVENTS)
    assert [s.dialogs for s in steps] == [["confirm 'Delete Anvil?': ok"]]
    assert in_words(steps)[0].actions == ["Answered confirm 'Delete Anvil?': ok"]
