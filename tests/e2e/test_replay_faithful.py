"""A replay replays every recorded action or names the one it could not: a todo test typing three items into one field,
choosing in a select, ticking a checkbox, opening a new tab and navigating replays completely without an LLM call; the
same test on a rebuilt form falls back to the agent with the drift reported everywhere; and (property) a recording whose
any action's element is removed or altered never passes as `replayed`: the replay stops at that very step (`heal:
false`, so no agent takes over: the fall-back is the rebuilt form's test above)."""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from preview_qa.demo.scripted_llm import ScriptedLLM
from preview_qa.engine.replay_cache import RecordingCache
from preview_qa.manifest.loader import load
from tests.conftest import CliRun, clean_env, run_args, run_in_process
from tests.fakes.github import runner_env
from tests.site import DemoSite
from tests.site.todo import todo_turns

pytestmark = pytest.mark.e2e

TODO_TEST = """
  - name: {name}
    start: /todos
    task: "[{tag}] Add three todos, finish the first, read the help and check the summary."
    expect: {{url: /todos/summary, text: ["3 todo(s), 1 done: Walk the dog, Feed the cat, Water the plants"]}}"""
HELP_TEST = """
  - name: help label
    start: /help
    task: "[help] Press the help page's button and read its label."
    output_schema: {type: object, properties: {label: {type: string}}, required: [label]}
    expect: {data: {label: Thanks!}}"""


def scenarios(site: DemoSite) -> list[dict[str, Any]]:
    return [
        {"name": "todo", "match": "[todo]", "turns": todo_turns(site.url)},
        {
            "name": "help",
            "match": "[help]",
            "turns": [
                {"actions": [{"click": {"element": "Got it"}}]},
                {"done": {"status": "pass", "reason": "It says Thanks!", "data": {"label": "Thanks!"}}},
            ],
            "other": json.dumps({"status": "pass", "reason": "The button says Thanks!", "data": {"label": "Thanks!"}}),
        },
    ]


@dataclass
class Runs:
    record: CliRun
    replay: CliRun
    changed: CliRun
    summary: str  # the job summary of the run against the changed form
    calls: dict[str, list[dict[str, Any]]]
    requests: dict[str, list[dict[str, Any]]]
    recorded: dict[str, Any]  # the todo test's cache entry after the first run (the fallback later replaces it)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runs]:
    folder = tmp_path_factory.mktemp("faithful")
    workspace = folder / "workspace"
    workspace.mkdir()
    manifest = workspace / "qa.yml"
    manifest.write_text(
        textwrap.dedent(
            "version: 1\ndefaults: {max_steps: 10, timeout: 180}\ntests:" + TODO_TEST.format(name="todo", tag="todo") + HELP_TEST
        )
        + "\n",
        encoding="utf-8",
    )
    env = clean_env(**runner_env(workspace))
    del env["PREVIEW_QA_NO_CACHE"]
    calls: dict[str, list[dict[str, Any]]] = {}
    requests: dict[str, list[dict[str, Any]]] = {}
    with DemoSite() as site, ScriptedLLM(scenarios(site)) as llm:

        def cli(out: str) -> CliRun:
            first = len(llm.calls)
            Path(env["GITHUB_STEP_SUMMARY"]).write_text("", encoding="utf-8")
            args = run_args(manifest, site.url, folder / out, llm, "--cache", str(folder / "cache"), "--concurrency", "2")
            proc = run_in_process([*args, "--no-comment"], env=env, cwd=workspace)
            calls[out], requests[out] = llm.calls[first:], llm.requests[first:]
            return CliRun(proc.returncode, proc.stdout, proc.stderr, folder / out, llm)

        record = cli("record")
        [recorded] = [
            e for p in (folder / "cache").glob("*.json") if (e := json.loads(p.read_text(encoding="utf-8")))["test"] == "todo"
        ]
        replay = cli("replay")
        site.todo_version = 2  # the form is rebuilt: another id, label and place
        changed = cli("changed")
        yield Runs(
            record, replay, changed, Path(env["GITHUB_STEP_SUMMARY"]).read_text(encoding="utf-8"), calls, requests, recorded
        )


def agent_calls(runs: Runs, out: str, scenario: str) -> list[dict[str, Any]]:
    return [c for c in runs.calls[out] if c["scenario"] == scenario]


def test_the_agent_run_passes_and_is_recorded(runs: Runs) -> None:
    assert runs.record.exit_code == 0, runs.record.stdout + runs.record.stderr[-3000:]
    assert runs.record.test("todo")["path"] == "agent" and runs.record.test("todo")["steps"] == 8


def test_an_unchanged_page_replays_every_step_without_an_llm_call(runs: Runs) -> None:
    t = runs.replay.test("todo")
    assert (t["status"], t["path"], t["steps"]) == ("passed", "replayed", 8), t
    assert agent_calls(runs, "replay", "todo") == [] and t["usage"]["llm_calls"] == 0
    assert t["replay_drift"] is None
    steps = [json.loads(line) for line in (runs.replay.out / t["artifacts"]["events"]).read_text().splitlines()]
    steps = [s for s in steps if s["type"] == "step"]
    typed = [a["input"]["text"] for s in steps for a in s["actions"] if "input" in a]
    assert typed == ["Walk the dog", "Feed the cat", "Water the plants"]  # each one, though into the same field
    assert [s["url"].rsplit("/", 1)[1] for s in steps[4:7]] == ["help", "help", "summary"]  # the new tab, then navigation
    assert [s["number"] for s in steps] == list(range(1, 9))
    # every step that did something on the page shows the page after it; the done step did nothing
    assert len(t["artifacts"]["screenshots"]) == 7 and "animation" in t["artifacts"]


def test_a_changed_form_falls_back_to_the_agent_names_the_step_and_still_passes(runs: Runs) -> None:
    t = runs.changed.test("todo")
    assert (t["status"], t["path"]) == ("passed", "replay-fell-back"), t
    drift = "replay drifted at step 1: input 'Walk the dog' into textbox 'New todo': element not found"
    assert t["replay_drift"] == drift
    assert t["reason"] == "The summary lists the three todos, one done."  # the verdict's reason stays the agent's
    assert agent_calls(runs, "changed", "todo")
    for key in ("replay_drift_recorded", "replay_drift_live"):
        assert (runs.changed.out / t["artifacts"][key]).read_bytes().startswith(b"\x89PNG")
    assert drift in runs.changed.stdout
    report = (runs.changed.out / "report.html").read_text(encoding="utf-8")
    assert drift.replace("'", "&#39;") in report and t["artifacts"]["replay_drift_live"] in report
    assert drift in runs.summary.replace("\\", "")  # the job summary (and the PR comment, the same text)
    assert drift in (runs.changed.out / "comment.md").read_text(encoding="utf-8").replace("\\", "")


def test_a_replay_needing_a_verdict_makes_one_small_call_with_a_screenshot_only_for_a_page_without_text(runs: Runs) -> None:
    t = runs.replay.test("help label")
    assert (t["status"], t["path"], t["reason"]) == ("passed", "replayed", "The button says Thanks!"), t
    [call] = [i for i, c in enumerate(runs.calls["replay"]) if c["scenario"] == "help"]
    body = runs.requests["replay"][call]
    assert runs.calls["replay"][call]["kind"] == "other"
    parts = body["messages"][-1]["content"]
    assert [p["type"] for p in parts] == ["text", "image_url"]  # the help page has almost no text
    assert len(json.dumps(body)) < 200_000


MUTATIONS = ("removed", "altered")


def mutants(recording: dict[str, Any]) -> list[tuple[str, int, int]]:
    """(mutation, history position, action position) for every recorded action that has an element."""
    found = []
    for position, item in enumerate(recording["history"]["history"]):
        for i, element in enumerate(item["state"]["interacted_element"] or []):
            if element:
                found += [(m, position, i) for m in MUTATIONS]
    return found


def mutate(entry: dict[str, Any], mutation: str, position: int, index: int) -> dict[str, Any]:
    entry = json.loads(json.dumps(entry))
    elements = entry["history"]["history"][position]["state"]["interacted_element"]
    if mutation == "removed":
        elements[index] = None
    else:
        elements[index].update(
            element_hash=1,
            stable_hash=2,
            x_path="html/body/main/nowhere",
            ax_name="Nothing here",
            attributes={"id": "nothing-here", "name": "nothing-here"},
        )
    return entry


def test_property_a_recording_with_any_element_removed_or_altered_never_passes_as_replayed(runs: Runs, tmp_path: Path) -> None:
    """For every recorded action with an element, both ways: the replay stops at that very step and fails there; it
    never goes on past the missing element (under `heal: false` no agent takes over: the test is whether the replay
    could pass on its own)."""
    site_url, entry = runs.record.results["base_url"], runs.recorded
    cases = mutants(entry)
    assert len(cases) == 14  # 7 actions on elements: three inputs, a select, a checkbox, a link, a button
    tests = "".join(TODO_TEST.format(name=f"m{n}", tag=f"mutant {n}") for n in range(len(cases)))
    qa = tmp_path / "qa.yml"
    qa.write_text(textwrap.dedent("version: 1\ndefaults: {max_steps: 3, timeout: 120, heal: false}\ntests:" + tests) + "\n")
    manifest = load(qa)
    cache = RecordingCache(tmp_path / "cache", manifest, "openai", "scripted")
    for spec, (mutation, position, index) in zip(manifest.tests, cases, strict=True):
        mutated = mutate(entry, mutation, position, index)
        cache.store(spec, mutated["origin"], mutated["history"])
    with DemoSite() as site, ScriptedLLM(scenarios(site)) as llm:
        env = clean_env()
        del env["PREVIEW_QA_NO_CACHE"]
        proc = run_in_process(
            run_args(qa, site.url, tmp_path / "out", llm, "--cache", str(tmp_path / "cache"), "--concurrency", "4"), env=env
        )
        assert site_url != site.url  # a new preview: the recording is moved onto it
    results = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))["tests"]
    for test, (mutation, position, index) in zip(results, cases, strict=True):
        step = entry["history"]["history"][position]["metadata"]["step_number"]
        assert (test["status"], test["path"]) == ("failed", "replayed"), (mutation, position, index, test)
        assert re.match(rf"replay drifted at step {step}: .*(no element|element not found)", test["replay_drift"]), test
        assert test["reason"] == f"{test['replay_drift']}; heal: false, so the agent did not take over", test
        assert test["usage"]["llm_calls"] == 0, test
    assert proc.returncode == 1
