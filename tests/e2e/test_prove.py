"""End to end: `run --prove` on the demo's settings page (src/preview_qa/demo/settings.py). A test that checks the saved
state is proven, one that checks only the URL is vacuous (`--fail-on vacuous` exits 1), one that checks the footer is
weak; the tests' own verdicts stand, the preview never sees a proof's write, a second run with the same recordings
and pages takes the proofs from the cache without replaying them, and a test replayed from the cache is proven from
its recording."""

from __future__ import annotations

import json
import shutil
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from preview_qa.demo.scripted_llm import ScriptedLLM
from tests.conftest import DEMO_PASSWORD, CliRun, clean_env, preview_qa_run
from tests.site import DemoSite

pytestmark = pytest.mark.e2e

MANIFEST = """
version: 1
defaults: {max_steps: 4, timeout: 90}
tests:
  - name: saved state
    start: /settings
    task: "[grace] Set the display name to Grace, save and check the saved name is shown."
    expect: {text: "Saved display name: Grace"}
  - name: url only
    start: /settings
    task: "[ada] Set the display name to Ada, save the settings and check they are saved."
    expect: {url: /settings}
  - name: footer text
    start: /settings
    task: "[lin] Set the display name to Lin, save the settings and check they are saved."
    expect: {text: "kept safe by Acme"}
"""


def saving(tag: str, name: str) -> dict[str, Any]:
    actions = [{"input": {"element": "Display name", "text": name}}, {"click": {"element": "Save"}}]
    return {"match": tag, "turns": [{"actions": actions}, {"done": {"status": "pass", "reason": "Saved."}}]}


SCENARIOS = [saving("[grace]", "Grace"), saving("[ada]", "Ada"), saving("[lin]", "Lin")]
SAVE_500 = "POST /api/settings answers 500"


@dataclass
class Runs:
    first: CliRun
    again: CliRun
    log: list[tuple[str, str]]  # (method, path) the preview saw during the first run
    log_again: list[tuple[str, str]]
    replayed: CliRun  # the saved-state test replayed from the cache, its proof not cached
    log_replayed: list[tuple[str, str]]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runs]:
    folder = tmp_path_factory.mktemp("prove")
    manifest = folder / "qa.yml"
    manifest.write_text(textwrap.dedent(MANIFEST), encoding="utf-8")
    env = clean_env()
    del env["PREVIEW_QA_NO_CACHE"]
    with DemoSite(password=DEMO_PASSWORD) as site, ScriptedLLM(SCENARIOS) as llm:

        def run(out: str, *extra: str) -> tuple[CliRun, list[tuple[str, str]]]:
            seen = len(site.request_log)
            args = ("--prove", "--fail-on", "vacuous", "--cache", str(folder / "cache"), "--concurrency", "2", *extra)
            done = preview_qa_run(manifest, site.url, folder / out, llm, *args, env=env)
            return done, site.request_log[seen:]

        first, log = run("first")
        again, log_again = run("again")
        shutil.rmtree(folder / "cache" / "proofs")
        replayed, log_replayed = run("replayed", "--only", "saved state")
        yield Runs(first, again, log, log_again, replayed, log_replayed)


def proof(run: CliRun, name: str) -> dict[str, Any]:
    found = run.test(name)["proof"]
    assert found is not None, run.test(name)
    return dict(found)


def outcome(run: CliRun, name: str, mutation: str) -> str:
    return next(m["outcome"] for m in proof(run, name)["mutations"] if m["name"] == mutation)


def test_a_test_that_checks_the_saved_state_is_proven(runs: Runs) -> None:
    found = proof(runs.first, "saved state")
    assert found["verdict"] == "proven", found
    assert outcome(runs.first, "saved state", SAVE_500) == "failed"


def test_a_url_only_save_test_is_vacuous_and_says_which_mutation_it_survived(runs: Runs) -> None:
    found = proof(runs.first, "url only")
    assert found["verdict"] == "vacuous", found
    assert found["reason"] == f"passes even when {SAVE_500}"
    assert outcome(runs.first, "url only", SAVE_500) == "passed"
    assert runs.first.results["totals"]["vacuous"] == 1
    summary = " ".join(runs.first.stdout.split())  # the console wraps its lines
    assert "vacuous: url only" in summary and "add an `expect` on what the app did" in summary, summary


def test_a_footer_text_test_is_weak(runs: Runs) -> None:
    found = proof(runs.first, "footer text")
    assert found["verdict"] == "weak", found
    assert outcome(runs.first, "footer text", SAVE_500) == "passed"
    assert outcome(runs.first, "footer text", "the expected text 'kept safe by Acme' is removed from the pages") == "failed"


def test_fail_on_vacuous_exits_1_though_every_test_passed(runs: Runs) -> None:
    assert runs.first.exit_code == 1, runs.first.stdout + runs.first.stderr
    assert runs.first.results["totals"]["passed"] == 3


def test_proofs_never_change_the_tests_own_verdicts(runs: Runs) -> None:
    for name in ("saved state", "url only", "footer text"):
        t = runs.first.test(name)
        assert (t["status"], t["path"], t["reason"]) == ("passed", "agent", "Saved."), t


def test_the_preview_sees_no_write_of_a_proof(runs: Runs) -> None:
    """Three agent runs save once each; their proof replays save nothing: only GETs reach the preview."""
    writes = [(method, path) for method, path in runs.log if method != "GET"]
    assert writes == [("POST", "/api/settings")] * 3, runs.log
    assert {path for method, path in runs.log if method == "GET"} <= {"/settings"}, runs.log


def test_the_report_and_the_events_show_proofs_apart_from_the_test_s_own_evidence(runs: Runs) -> None:
    report = (runs.first.out / "report.html").read_text(encoding="utf-8")
    assert 'id="proofs"' in report and "url only</strong> is vacuous" in report
    events = runs.first.out / str(runs.first.test("url only")["artifacts"]["events"])
    kinds = [json.loads(line)["type"] for line in events.read_text(encoding="utf-8").splitlines()]
    assert kinds.count("proof") == len(proof(runs.first, "url only")["mutations"])
    assert kinds.count("verdict") == 1  # the test's own; a proof's replay announces no verdict of its own
    shots = runs.first.test("url only")["artifacts"].get("screenshots", [])
    assert all(Path(s).parent.name == Path(str(events)).parent.name for s in shots)


def test_a_second_run_takes_the_proofs_from_the_cache(runs: Runs) -> None:
    for name in ("saved state", "url only", "footer text"):
        t = runs.again.test(name)
        assert t["path"] == "replayed", t
        again, first = proof(runs.again, name), proof(runs.first, name)
        assert again["cached"] is True and again["verdict"] == first["verdict"], again
    writes = [(method, path) for method, path in runs.log_again if method != "GET"]
    assert writes == [("POST", "/api/settings")] * 3, runs.log_again  # the replays' own saves, no proof's


def test_a_replayed_test_is_proven_from_its_recording_and_its_replay_s_answers(runs: Runs) -> None:
    t = runs.replayed.test("saved state")
    assert t["path"] == "replayed" and t["proof"]["verdict"] == "proven" and t["proof"]["cached"] is False, t
    writes = [(method, path) for method, path in runs.log_replayed if method != "GET"]
    assert writes == [("POST", "/api/settings")], runs.log_replayed  # the replay's own save, none of its proof's
