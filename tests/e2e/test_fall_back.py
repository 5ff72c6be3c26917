"""End to end: healed means a page changed. A replay whose one page-check LLM call gets garbage (prose, no verdict)
falls back to the agent, which passes: the test is passed and shown as a fall-back for an unusable LLM answer, never
healed, in results.json, the console and the job summary; `--fail-on healed` does not fail the run for it; and, in a
pull request's run, the recording that replayed stays in the cache."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import CliRun, clean_env, scripted_run
from tests.fakes.github import runner_env
from tests.site import DemoSite

pytestmark = pytest.mark.e2e

MANIFEST = """
version: 1
defaults: {max_steps: 4, timeout: 120}
tests:
  - name: price shown
    start: /product
    task: "[price] Check that the product page shows a price."
"""  # no page check that code can decide: the replay's verdict is the page check's one LLM call
SCENARIOS = [
    {
        "match": "[price]",
        "turns": [
            {"actions": [{"scroll": {"down": True}}]},
            {"done": {"status": "pass", "reason": "It shows $19.99.", "quotes": ["Price: $19.99"]}},
        ],
        "other": "I think it passed!",  # the page check's answer: prose, no verdict
    }
]


@dataclass
class Runs:
    record: CliRun
    replay: CliRun
    summary: str  # the replay's job summary
    recorded: str  # the cache entry after the recording
    after: str  # ... and after the pull request's fall-back


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, site: DemoSite) -> Iterator[Runs]:
    env = clean_env()
    del env["PREVIEW_QA_NO_CACHE"]
    cache = tmp_path_factory.mktemp("cache")
    with scripted_run(tmp_path_factory.mktemp("record"), site, MANIFEST, SCENARIOS, "--cache", str(cache), env=env) as record:
        pass
    [entry] = cache.glob("*.json")
    recorded = entry.read_text(encoding="utf-8")
    workspace = tmp_path_factory.mktemp("workspace")
    github = {**env, **runner_env(workspace)}
    extra = ("--cache", str(cache), "--fail-on", "healed", "--no-comment")
    with scripted_run(tmp_path_factory.mktemp("replay"), site, MANIFEST, SCENARIOS, *extra, env=github) as replay:
        pass
    summary = Path(github["GITHUB_STEP_SUMMARY"]).read_text(encoding="utf-8")
    yield Runs(record, replay, summary, recorded, entry.read_text(encoding="utf-8"))


def test_garbage_from_the_page_check_falls_back_and_is_not_healed(runs: Runs) -> None:
    assert runs.record.test("price shown")["status"] == "passed", runs.record.stdout + runs.record.stderr
    t = runs.replay.test("price shown")
    assert (t["status"], t["path"], t["healed"], t["fell_back"]) == ("passed", "replay-fell-back", False, "llm_answer"), t
    assert t["replay_drift"] is None
    kinds = [c["kind"] for c in runs.replay.llm.calls] if runs.replay.llm else []
    assert kinds[0] == "other" and kinds.count("agent") >= 2  # the page check's one call, then the agent's run
    assert runs.replay.exit_code == 0, runs.replay.stdout + runs.replay.stderr  # --fail-on healed: nothing healed
    assert runs.replay.results["totals"]["healed"] == 0


def test_the_fall_back_is_shown_for_what_it_is(runs: Runs) -> None:
    assert "(fell back, not healed: the page check's LLM answer was unusable) price shown" in runs.replay.stdout
    assert "replay → agent (" in runs.replay.stdout and "1 passed, 1 fell back (not healed)" in runs.replay.stdout
    assert "1 fell back to the agent (not healed)" in runs.summary and "Healed" not in runs.summary
    events = (runs.replay.out / runs.replay.test("price shown")["artifacts"]["events"]).read_text(encoding="utf-8")
    [fell] = [e for e in map(json.loads, events.splitlines()) if e["type"] == "replay_fell_back"]
    assert (fell["cause"], fell["reason"]) == ("llm_answer", "the page check after the replay gave no valid verdict")


def test_a_pull_requests_fall_back_keeps_the_recording(runs: Runs) -> None:
    assert runs.after == runs.recorded


def test_a_replay_says_it_replayed_and_its_llm_calls(runs: Runs) -> None:
    # two agent turns and the second look at its quote (no page check of its own decides it: issue #64)
    assert "price shown (" in runs.record.stdout and ", agent (3 LLM calls))" in runs.record.stdout
