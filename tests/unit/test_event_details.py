"""Typed event details keep events.jsonl as it was: each kind's line, written from its typed detail, has the keys a
demo run wrote before the details were typed, and lines of that shape (and older ones) read back into the fields."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from preview_qa.events import (
    ActionsDropped,
    ConsoleError,
    Detail,
    DialogAnswered,
    PageError,
    PageSettled,
    ReplayFellBack,
    RunStarted,
    Timings,
)
from preview_qa.reporters.artifacts import ArtifactsReporter
from preview_qa.reporters.output import files

# Lines of a demo run's events.jsonl written before the details were typed (ts shortened), one per kind.
WRITTEN_BEFORE = [
    '{"ts": "t", "type": "settled", "error": false, "outcome": "settled", "waited_s": 0.02, "waited_for": [], "from_url": '
    '"http://127.0.0.1:41437/", "to_url": "http://127.0.0.1:41437/", "moved": false, "polls": [], "rendered": true, '
    '"busy": [], "summary": "the page was quiet"}',  # busy: #63
    '{"ts": "t", "type": "timings", "error": false, "phases": [{"phase": "agent set-up", "wall_s": 0.093, "cpu_s": null}], '
    '"total_wall_s": 14.2}',
    '{"ts": "t", "type": "dialog", "error": false, "dialog": "confirm", "message": "Delete Anvil?", "answer": "ok", "step": 2}',
    '{"ts": "t", "type": "dialog", "error": "Error: Target page, context or browser has been closed", "dialog": "alert", '
    '"message": "Saved", "answer": "ok", "step": null}',
    '{"ts": "t", "type": "actions_dropped", "error": false, "step": 1, "why": "over max_actions_per_step=1", "actions": '
    '[{"click": {"index": 4}}], "elements": [{"index": 4, "role": "link", "name": "Pricing", "tag": "a"}]}',
    '{"ts": "t", "type": "replay_fell_back", "error": false, "reason": "the page check after the replay gave no valid '
    'verdict", "cause": "llm_answer", "why": "the page check\'s LLM answer was unusable"}',
    '{"ts": "t", "type": "console_error", "error": true, "text": "Failed to load resource: 401", "url": "http://x/cart"}',
    '{"ts": "t", "type": "page_error", "error": true, "message": "TypeError: cart.total is undefined"}',
]
DETAILS: list[type[Detail]] = [PageSettled, Timings, DialogAnswered, ActionsDropped, ReplayFellBack, ConsoleError, PageError]


def _detail_of(line: dict[str, Any]) -> Detail:
    found = [d for cls in DETAILS if (d := cls.read(line)) is not None]
    assert len(found) == 1, line
    return found[0]


@pytest.mark.parametrize("written", WRITTEN_BEFORE)
def test_a_line_written_from_its_typed_detail_has_the_same_keys_and_values(tmp_path: Path, written: str) -> None:
    before = json.loads(written)
    reporter = ArtifactsReporter(tmp_path)
    reporter.handle(RunStarted(manifest="qa.yml", base_url="http://x", test_names=["t"]))
    reporter.handle(_detail_of(before).observed("t", error=before["error"] is True))
    (line,) = (json.loads(text) for text in (tmp_path / files.test_dir("t") / files.EVENTS).read_text().splitlines())
    assert list(line) == list(before)  # the same keys, in the same order
    assert {**line, "ts": "t"} == before


def test_readers_get_fields_from_lines_of_other_kinds_and_versions() -> None:
    older = {"type": "settled", "error": False, "outcome": "settled", "waited_s": 0.0, "summary": "the page was quiet"}
    assert PageSettled.read(older) == PageSettled(outcome="settled", waited_s=0.0, summary="the page was quiet")
    assert ReplayFellBack.read({"type": "replay_fell_back", "error": False, "reason": "drifted"}) == ReplayFellBack(
        reason="drifted"
    )
    answered = DialogAnswered.read(json.loads(WRITTEN_BEFORE[2]))
    assert answered is not None and answered.error is None and answered.words() == "confirm 'Delete Anvil?': ok"
    unanswered = DialogAnswered.read(json.loads(WRITTEN_BEFORE[3]))
    assert unanswered is not None and unanswered.error and unanswered.observed("t").error is True
    assert PageSettled.read({"type": "dialog"}) is None and PageError.read({"type": "page_error"}) is None  # not its shape
