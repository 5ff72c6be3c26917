"""End to end: `run --prove` on two kinds of save, one CLI run of one manifest for most assertions. The demo's settings
page saves by fetch (src/preview_qa/demo/settings.py): a test that checks the saved state is proven, one that checks
only the URL is vacuous (`--fail-on vacuous` exits 1), one that checks the footer is weak. A notes form posts and
redirects (303, tests/site/prove_site.py), so a replay whose save is broken cannot follow its recording: it is judged by
the test's checks on the page the app showed, so the URL-only test is proven (the broken save leaves it on the form,
whose URL contains its /notes/ only as a part: a url that held only by never leaving fails), the header-only test weak
(its header was on the page before the first action) and the saved-text test proven. The tests' own verdicts stand,
the preview never sees a proof's write, a second run with the same recordings and pages (the form's tokens fresh in
every load) takes the proofs from the cache without replaying them, and a test replayed from the cache is proven from
its recording."""

from __future__ import annotations

import json
import shutil
import textwrap
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from preview_qa.demo.scripted_llm import ScriptedLLM
from tests.conftest import CliRun, clean_env, preview_qa_run
from tests.site.prove_site import ProveSite

pytestmark = pytest.mark.e2e

# expect.timeout 3 s: a proof's replay that catches a mutation waits out its failing check; each page here has rendered
# by the time it is checked (server-rendered, or settled on the save's fetch)
MANIFEST = """
version: 1
defaults: {max_steps: 4, timeout: 90, expect: {timeout: 3}}
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
  - name: note saved
    start: /notes/new
    task: "[note grace] Add a note titled Grace and check it is saved."
    expect: {text: "Saved note: Grace"}
  - name: note url only
    start: /notes/new
    task: "[note ada] Add a note titled Ada and check it is saved."
    expect: {url: /notes/}
  - name: note header only
    start: /notes/new
    task: "[note lin] Add a note titled Lin and check it is saved."
    expect: {text: "Acme notes"}
"""


def saving(tag: str, field: str, name: str) -> dict[str, Any]:
    actions = [{"input": {"element": field, "text": name}}, {"click": {"element": "Save"}}]
    return {"match": tag, "turns": [{"actions": actions}, {"done": {"status": "pass", "reason": "Saved."}}]}


SCENARIOS = [
    *(saving(f"[note {n.lower()}]", "Title", n) for n in ("Grace", "Ada", "Lin")),
    *(saving(f"[{n.lower()}]", "Display name", n) for n in ("Grace", "Ada", "Lin")),
]
SAVE_500 = "POST /api/settings answers 500"
NOTE_500 = "POST /notes/new answers 500"
SETTINGS = ("saved state", "url only", "footer text")
NOTES = ("note saved", "note url only", "note header only")


@dataclass
class Runs:
    first: CliRun
    again: CliRun
    log: list[tuple[str, str]]  # (method, path) the preview saw during the first run
    log_again: list[tuple[str, str]]
    replayed: CliRun  # the saved-state test replayed from the cache, its proof not cached
    log_replayed: list[tuple[str, str]]
    tokens: int  # CSRF tokens the notes form handed out in the first two runs, one per load


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runs]:
    folder = tmp_path_factory.mktemp("prove")
    manifest = folder / "qa.yml"
    manifest.write_text(textwrap.dedent(MANIFEST), encoding="utf-8")
    env = clean_env()
    del env["PREVIEW_QA_NO_CACHE"]
    with ProveSite() as site, ScriptedLLM(SCENARIOS) as llm:

        def run(out: str, *extra: str) -> tuple[CliRun, list[tuple[str, str]]]:
            seen = len(site.request_log)
            args = ("--prove", "--fail-on", "vacuous", "--cache", str(folder / "cache"), "--concurrency", "2", *extra)
            done = preview_qa_run(manifest, site.url, folder / out, llm, *args, env=env)
            return done, site.request_log[seen:]

        first, log = run("first")
        again, log_again = run("again")
        tokens = len(site.tokens)
        shutil.rmtree(folder / "cache" / "proofs")
        replayed, log_replayed = run("replayed", "--only", "saved state")
        yield Runs(first, again, log, log_again, replayed, log_replayed, tokens)


def proof(run: CliRun, name: str) -> dict[str, Any]:
    found = run.test(name)["proof"]
    assert found is not None, run.test(name)
    return dict(found)


def mutation(run: CliRun, name: str, named: str) -> dict[str, Any]:
    return dict(next(m for m in proof(run, name)["mutations"] if m["name"] == named))


def outcome(run: CliRun, name: str, named: str) -> str:
    return str(mutation(run, name, named)["outcome"])


def test_a_test_that_checks_the_saved_state_is_proven(runs: Runs) -> None:
    found = proof(runs.first, "saved state")
    assert found["verdict"] == "proven", found
    assert outcome(runs.first, "saved state", SAVE_500) == "failed"


def test_a_url_only_save_test_is_vacuous_and_says_which_mutation_it_survived(runs: Runs) -> None:
    found = proof(runs.first, "url only")
    assert found["verdict"] == "vacuous", found
    assert found["reason"] == f"passes even when {SAVE_500}"
    assert outcome(runs.first, "url only", SAVE_500) == "passed"
    assert runs.first.results["totals"]["vacuous"] == 1  # "note url only" is caught by its url: see below
    summary = " ".join(runs.first.stdout.split())  # the console wraps its lines
    assert "vacuous: url only" in summary and "add an `expect` on what the app did" in summary, summary


def test_a_footer_text_test_is_weak(runs: Runs) -> None:
    found = proof(runs.first, "footer text")
    assert found["verdict"] == "weak", found
    assert outcome(runs.first, "footer text", SAVE_500) == "passed"
    assert outcome(runs.first, "footer text", "the expected text 'kept safe by Acme' is removed from the pages") == "failed"


def test_fail_on_vacuous_exits_1_though_every_test_passed(runs: Runs) -> None:
    assert runs.first.exit_code == 1, runs.first.stdout + runs.first.stderr
    assert runs.first.results["totals"]["passed"] == 6


def test_proofs_never_change_the_tests_own_verdicts(runs: Runs) -> None:
    for name in SETTINGS + NOTES:
        t = runs.first.test(name)
        assert (t["status"], t["path"], t["reason"]) == ("passed", "agent", "Saved."), t


def test_the_preview_sees_no_write_of_a_proof(runs: Runs) -> None:
    """Six agent runs save once each; their proof replays save nothing: only GETs reach the preview."""
    assert writes(runs.log) == {("POST", "/api/settings"): 3, ("POST", "/notes/new"): 3}, runs.log
    pages = {"/", "/settings", "/notes/new", "/notes/grace", "/notes/ada", "/notes/lin"}  # /: the wait for the preview
    assert {path for method, path in runs.log if method == "GET"} <= pages, runs.log


def test_the_report_and_the_events_show_proofs_apart_from_the_test_s_own_evidence(runs: Runs) -> None:
    report = (runs.first.out / "report.html").read_text(encoding="utf-8")
    assert 'id="proofs"' in report and "url only</strong> is vacuous" in report
    events = runs.first.out / str(runs.first.test("url only")["artifacts"]["events"])
    kinds = [json.loads(line)["type"] for line in events.read_text(encoding="utf-8").splitlines()]
    assert kinds.count("proof") == len(proof(runs.first, "url only")["mutations"])
    assert kinds.count("verdict") == 1  # the test's own; a proof's replay announces no verdict of its own
    shots = runs.first.test("url only")["artifacts"].get("screenshots", [])
    assert all(Path(s).parent.name == Path(str(events)).parent.name for s in shots)


def test_a_second_run_takes_the_proofs_from_the_cache_though_the_form_s_token_is_fresh_in_every_load(runs: Runs) -> None:
    for name in SETTINGS + NOTES:
        t = runs.again.test(name)
        assert t["path"] == "replayed", t
        again, first = proof(runs.again, name), proof(runs.first, name)
        assert again["cached"] is True and again["verdict"] == first["verdict"], again
    loads = sum(1 for method, path in runs.log + runs.log_again if (method, path) == ("GET", "/notes/new"))
    assert runs.tokens >= loads >= 6  # each load of the form carried a token of its own
    assert writes(runs.log_again) == {("POST", "/api/settings"): 3, ("POST", "/notes/new"): 3}  # the replays' own saves


def test_a_replayed_test_is_proven_from_its_recording_and_its_replay_s_answers(runs: Runs) -> None:
    t = runs.replayed.test("saved state")
    assert t["path"] == "replayed" and t["proof"]["verdict"] == "proven" and t["proof"]["cached"] is False, t
    assert writes(runs.log_replayed) == {("POST", "/api/settings"): 1}, runs.log_replayed  # the replay's own save only


def test_a_form_that_redirects_is_judged_by_the_test_s_checks_where_the_broken_save_left_the_page(runs: Runs) -> None:
    """The save answering 500 leaves the page on /notes/new, where the recording went on to /notes/ada: the replay
    cannot follow it, and the URL-only test's /notes/ fails there: /notes/new contained it before anything was done,
    so it holds there only by never leaving (the wrong password of Django's admin login, which stays on /admin/login/).
    Before the first action it did not hold either, so the catch is the test's own: proven."""
    found = proof(runs.first, "note url only")
    assert found["verdict"] == "proven" and found["reason"] == f"it fails when {NOTE_500}", found
    caught = mutation(runs.first, "note url only", NOTE_500)
    assert caught["outcome"] == "failed" and "the page it began on" in caught["reason"], caught
    assert "(on the page the app showed when the replay could not follow its recording: step " in caught["reason"]


def test_a_header_that_was_on_the_page_before_the_first_action_makes_a_test_weak(runs: Runs) -> None:
    found = proof(runs.first, "note header only")
    assert found["verdict"] == "weak", found
    assert found["reason"] == (
        f"visible text 'Acme notes' was on the page before its first action, and only that failed when {NOTE_500}"
    )
    caught = mutation(runs.first, "note header only", NOTE_500)
    assert caught["outcome"] == "failed" and "expected visible text 'Acme notes'" in caught["reason"], caught
    assert "; but visible text 'Acme notes' was on the page before the first action" in caught["reason"], caught
    assert len(found["mutations"]) == 1  # its only check held before the first action: no other mutation could prove it
    summary = " ".join(runs.first.stdout.split())
    assert "weak: note header only: visible text 'Acme notes' was on the page before its first action" in summary


def test_a_test_that_checks_the_saved_note_is_proven_by_the_check_that_failed(runs: Runs) -> None:
    found = proof(runs.first, "note saved")
    assert found["verdict"] == "proven" and found["reason"] == f"it fails when {NOTE_500}", found
    caught = mutation(runs.first, "note saved", NOTE_500)
    assert caught["reason"].startswith("expectation text failed: expected visible text 'Saved note: Grace'"), caught
    assert "(on the page the app showed when the replay could not follow its recording: step " in caught["reason"]
    assert len(found["mutations"]) == 1


def writes(log: list[tuple[str, str]]) -> dict[tuple[str, str], int]:
    return dict(Counter((method, path) for method, path in log if method != "GET"))
