"""`preview-qa run --explore` in a GitHub Actions pull request run, on the explore fixture pair (tests/site/explore_pair.py)
with a manifest of one exact-step test (no LLM, no API key): the exploration after the tests lands in the run's
results.json, report.html, the one job summary and the one PR comment, its own files in explore/; its sweeps' runs
annotate, comment and summarise nothing of theirs; the run fails on it only with `--fail-on findings`. One run, read
by every test here (the pair's sweep takes about 40 s), and the one exploration of the whole pair in the suite: every
regression the PR plants that a sweep sees is found, new and confirmed by its repro; main's own bugs are `on_baseline`;
the pages alike on both sides give nothing; and each confirmed repro, run by `preview-qa run` as it stands, fails on the
PR and passes on main. tests/e2e/test_explore.py runs `preview-qa explore` itself on a few pages."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from subprocess import CompletedProcess
from typing import Any

import pytest
import yaml
from pytest_httpserver import HTTPServer

from preview_qa.config import FailRules
from preview_qa.exits import RunEnded, exit_code
from preview_qa.lifecycle import ExitCode
from preview_qa.results import RunResult
from tests.conftest import clean_env, run_in_process
from tests.fakes.github import FakeGitHub, read_log, read_outputs, runner_env
from tests.site.explore_pair import ALSO_ON_PR, CLEAN, ON_BOTH, PR_ONLY, PairUrls

pytestmark = pytest.mark.e2e

MANIFEST = "version: 1\ntests:\n  - name: home\n    steps:\n      - open: /\n"


@dataclass
class Explored:
    proc: CompletedProcess[str]
    out: Path
    results: dict[str, Any]
    comments: list[str]
    summary: str
    outputs: dict[str, str]


@pytest.fixture(scope="module")
def explored(tmp_path_factory: pytest.TempPathFactory, explore_pair: PairUrls) -> Iterator[Explored]:
    workspace = tmp_path_factory.mktemp("run-explore") / "workspace"
    workspace.mkdir()
    (workspace / "qa.yml").write_text(MANIFEST, encoding="utf-8")
    server = HTTPServer(host="127.0.0.1", port=0)
    server.start()
    github = FakeGitHub(server)
    try:
        env = clean_env(**runner_env(workspace, github.url))
        args = ["run", "qa.yml", "--base-url", explore_pair.pr, "--baseline-url", explore_pair.main, "--explore"]
        proc = run_in_process([*args, "--fail-on", "findings", "--out", "results"], env, workspace)
        out = workspace / "results"
        results = json.loads((out / "results.json").read_text(encoding="utf-8"))
        summary = Path(env["GITHUB_STEP_SUMMARY"]).read_text(encoding="utf-8")
        yield Explored(
            proc, out, results, [c["body"] for c in github.comments], summary, read_outputs(Path(env["GITHUB_OUTPUT"]))
        )
    finally:
        server.stop()


def test_the_exploration_is_in_the_run_s_results_and_its_files_in_explore(explored: Explored) -> None:
    results, out = explored.results, explored.out
    assert results["schema_version"] == 17 and [t["status"] for t in results["tests"]] == ["passed"]
    breaks = {(f["kind"], f["url"]) for f in results["explore"]["findings"] if f["confirmed"] and not f["on_baseline"]}
    assert set(PR_ONLY.items()) <= breaks, set(PR_ONLY.items()) - breaks
    assert (
        json.loads((out / "explore" / "results.json").read_text(encoding="utf-8"))["findings"] == results["explore"]["findings"]
    )
    assert (out / "explore" / "findings.md").read_text(encoding="utf-8").startswith("## This PR breaks")
    for run in results["explore"]["runs"]:  # the sweeps' and repros' own results folders, inside explore/
        assert (out / "explore" / run / "results.json").is_file(), run
    report = (out / "report.html").read_text(encoding="utf-8")
    assert '<section id="explore"><h2>This PR breaks' in report and "<summary>repro</summary>" in report


def test_it_fails_the_run_only_with_fail_on_findings(explored: Explored) -> None:
    assert explored.proc.returncode == 1, explored.proc.stdout[-3000:]  # --fail-on findings, and the PR breaks things
    run = RunResult.model_validate(explored.results)
    assert exit_code(RunEnded(run, FailRules().fails)) is ExitCode.OK  # the same run under the default rule passes
    assert "explore: " in explored.proc.stdout and "new confirmed finding(s)" in explored.proc.stdout


def test_the_one_comment_and_the_one_summary_say_what_the_pr_breaks(explored: Explored) -> None:
    assert len(explored.comments) == 1 and "This PR breaks" in explored.comments[0]
    assert "```yaml" in explored.comments[0] and "Also on main (" in explored.comments[0]
    # the sweeps' and repros' own runs wrote no summary, output or comment of theirs: only the run's, once each
    headlines = [line for line in explored.summary.splitlines() if line.startswith("### ")]
    assert explored.summary.count("This PR breaks") == 1 and len(headlines) == 1, headlines
    assert (explored.outputs["total"], explored.outputs["passed"]) == ("1", "1")  # not a sweep run's counts
    commands = [c.name for c in read_log(explored.proc.stdout).commands if c.name != "add-mask"]
    assert commands.count("stop-commands") == 1 and "error" not in commands, commands


def test_every_planted_regression_is_found_new_and_confirmed(explored: Explored) -> None:
    findings = explored.results["explore"]["findings"]
    breaks = {(f["kind"], f["url"]) for f in findings if f["confirmed"] and not f["on_baseline"]}
    planted = {(kind, page) for kind, page in PR_ONLY.items()}
    consequences = {(kind, page) for page, kinds in ALSO_ON_PR.items() for kind in kinds}
    assert planted <= breaks, planted - breaks
    assert breaks <= planted | consequences, breaks - planted - consequences  # no false alarm


def test_main_s_own_bugs_are_on_baseline_and_alike_pages_give_nothing(explored: Explored) -> None:
    result = explored.results["explore"]
    on_main = {(f["kind"], f["url"]) for f in result["findings"] if f["on_baseline"]}
    assert set(ON_BOTH) <= on_main, set(ON_BOTH) - on_main  # /team's error differs by its request id: folded, still one
    assert not any(f["on_baseline"] and f["confirmed"] for f in result["findings"])
    assert not [f for f in result["findings"] if f["url"] in CLEAN]
    assert set(result["pages"]) >= {*PR_ONLY.values(), *CLEAN}  # from the sitemap


def test_the_findings_page_says_what_the_pr_breaks(explored: Explored) -> None:
    result, folder = explored.results["explore"], explored.out / "explore"
    text = (folder / "findings.md").read_text(encoding="utf-8")
    breaks = [f for f in result["findings"] if f["confirmed"] and not f["on_baseline"]]
    assert text.startswith(f"## This PR breaks {len(breaks)} things")
    for f in breaks:  # the page as the sweep or repro saw it, by its path from the exploration's folder
        assert (folder / f["evidence"]["screenshot"]).is_file(), f["evidence"]
    assert not list(folder.glob("*/tests/*/trace.zip"))  # --trace (here the action's `trace: off`) holds for its runs too
    assert "<summary>Also on main (" in text and "```yaml" in text
    # each run's results name the manifest it ran (from the workspace, as --out was given), and it is there beside them
    assert result["runs"] == ["sweep-preview", "sweep-baseline", "repro-preview", "repro-baseline"]
    for run in result["runs"]:
        named = json.loads((folder / run / "results.json").read_text(encoding="utf-8"))["manifest"]
        assert Path(named).parent == Path("results", "explore") and (explored.out.parent / named).is_file(), named


def test_each_confirmed_repro_run_as_it_stands_fails_on_the_pr_and_passes_on_main(
    explored: Explored, explore_pair: PairUrls, tmp_path: Path
) -> None:
    findings = explored.results["explore"]["findings"]
    repros = [f["repro"] for f in findings if f["confirmed"] and not f["on_baseline"] and f["kind"] != "visual"]
    manifest = tmp_path / "qa.yml"
    manifest.write_text(yaml.safe_dump({"version": 1, "tests": repros}, sort_keys=False), encoding="utf-8")
    for url, status in ((explore_pair.pr, "failed"), (explore_pair.main, "passed")):
        out = tmp_path / status
        proc = run_in_process(["run", str(manifest), "--base-url", url, "--out", str(out)], env=clean_env())
        tests = json.loads((out / "results.json").read_text(encoding="utf-8"))["tests"]
        assert {t["name"]: t["status"] for t in tests} == {r["name"]: status for r in repros}, proc.stdout
