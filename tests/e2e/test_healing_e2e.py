"""Healing in plain sight, end to end: a recorded login whose form was rebuilt drifts on replay, the agent passes it,
and the run says healed in results.json, JUnit, the console, the job summary and the outputs; `--fail-on healed`
exits 1; a pull request's healed run keeps the recording; `heal: false` fails it without an agent LLM call."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from xml.etree import ElementTree

import pytest

from preview_qa.demo.scripted_llm import ScriptedLLM
from tests.conftest import CliRun, clean_env, preview_qa_run
from tests.fakes.github import read_outputs, runner_env
from tests.site import DemoSite

pytestmark = pytest.mark.e2e
MANIFEST = """
version: 1
defaults: {{max_steps: 4, timeout: 120}}
tests:
  - name: login
    start: /login
    task: "[login] Log in with password <secret>pw</secret> and check the dashboard."
    secrets: {{pw: DEMO_PASSWORD}}
    expect: {{url: /dashboard, text: ["Signed in as demo@acme.test"]}}
    heal: {heal}
"""
SCENARIOS = [
    {
        "name": "login",
        "match": "[login]",
        "turns": [
            {
                "goal": "Log in",
                "actions": [
                    {"input": {"element": "Email", "text": "demo@acme.test"}},
                    {"input": {"element": "Password", "text": "<secret>pw</secret>"}},
                    {"click": {"element": "Log in"}},
                ],
            },
            {"goal": "Report", "done": {"status": "pass", "reason": "Signed in."}},
        ],
    }
]


@dataclass
class Runs:
    healed: CliRun
    healed_env: dict[str, str]
    refused: CliRun
    agent_calls: dict[str, int]
    recorded: str  # the cache entry after the first run, as the replays saw it
    after: str  # ... and after the pull request's healed run


def rebuild_the_form(cache: Path) -> Path:
    """As if the login form had been rebuilt: no recorded element can be found again."""
    [path] = cache.glob("*.json")
    entry = json.loads(path.read_text(encoding="utf-8"))
    for item in entry["history"]["history"]:
        for element in item["state"]["interacted_element"] or []:
            if element:
                element.update(x_path="html/body/nowhere", ax_name="gone", attributes={"name": "gone", "id": "gone"})
    path.write_text(json.dumps(entry), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, site: DemoSite) -> Iterator[Runs]:
    folder = tmp_path_factory.mktemp("healing")
    cache = folder / "cache"
    env = clean_env()
    del env["PREVIEW_QA_NO_CACHE"]
    (folder / "workspace").mkdir()
    github = {**env, **runner_env(folder / "workspace")}
    agent_calls: dict[str, int] = {}
    with ScriptedLLM(SCENARIOS) as llm:

        def cli(out: str, heal: str, run_env: dict[str, str], *extra: str) -> CliRun:
            manifest = folder / f"qa-{out}.yml"
            manifest.write_text(textwrap.dedent(MANIFEST.format(heal=heal)), encoding="utf-8")
            first = len(llm.calls)
            args = ("--cache", str(cache), "--no-comment", *extra)
            run = preview_qa_run(manifest, site.url, folder / out, llm, *args, env=run_env)
            agent_calls[out] = sum(1 for c in llm.calls[first:] if c["kind"] == "agent")
            return run

        record = cli("record", "true", env)
        assert record.exit_code == 0, record.stdout + record.stderr
        entry = rebuild_the_form(cache)
        recorded = entry.read_text(encoding="utf-8")
        healed = cli("healed", "true", github, "--fail-on", "healed")
        after = entry.read_text(encoding="utf-8")
        refused = cli("refused", "false", env)
        yield Runs(healed, github, refused, agent_calls, recorded, after)


def test_a_drifted_replay_the_agent_passed_is_passed_and_healed_and_fail_on_healed_exits_1(runs: Runs) -> None:
    t = runs.healed.test("login")
    assert (t["status"], t["path"], t["healed"]) == ("passed", "replay-fell-back", True), t
    assert t["replay_drift"] == "replay drifted at step 1: input 'demo@acme.test' into textbox 'gone': element not found"
    assert runs.agent_calls["healed"] >= 2  # the agent really ran
    assert runs.healed.exit_code == 1, runs.healed.stdout + runs.healed.stderr


def test_healed_is_counted_in_every_output(runs: Runs) -> None:
    assert runs.healed.results["totals"]["healed"] == 1 and runs.healed.results["totals"]["passed"] == 1
    junit = ElementTree.parse(runs.healed.out / "junit.xml")
    assert {p.get("name"): p.get("value") for p in junit.iterfind(".//testcase/properties/property")}["healed"] == "true"
    assert "1 passed, 1 healed" in runs.healed.stdout
    assert "healed: the replay drifted, the agent passed" in runs.healed.stdout
    assert read_outputs(Path(runs.healed_env["GITHUB_OUTPUT"]))["healed"] == "1"
    summary = Path(runs.healed_env["GITHUB_STEP_SUMMARY"]).read_text(encoding="utf-8")
    assert "1 passed · 1 healed (replay drifted, the agent passed)" in summary


def test_a_pull_requests_healed_run_keeps_the_recording(runs: Runs) -> None:
    assert runs.after == runs.recorded


def test_heal_false_fails_the_drifted_replay_without_the_agent(runs: Runs) -> None:
    t = runs.refused.test("login")
    assert (t["status"], t["healed"]) == ("failed", False), t
    assert t["reason"] == (
        "replay drifted at step 1: input 'demo@acme.test' into textbox 'gone': element not found; "
        "heal: false, so the agent did not take over"
    )
    assert runs.agent_calls["refused"] == 0 and runs.refused.exit_code == 1
