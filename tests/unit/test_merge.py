"""`preview-qa merge`: shards run with `--shard I/N` become one results folder, one JUnit file, one exit code."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from junitparser import JUnitXml
from pytest_httpserver import HTTPServer

from preview_qa.events import RunFinished, RunStarted, TestFinished
from preview_qa.reporters.artifacts import ArtifactsReporter
from preview_qa.reporters.junit import JUnitReporter
from preview_qa.reporters.output import files
from preview_qa.results import RunResult, Status, TestResult, Usage
from tests.builders import result
from tests.conftest import clean_env, run_in_process
from tests.fakes.github import FakeGitHub, runner_env

WORD = "on the agent's word: it quoted nothing from the page, and the test has no page check"


def shard_folder(folder: Path, tests: list[TestResult], duration: float) -> Path:
    """A results folder as a shard's `run` leaves it: results.json, junit.xml, and a file per test."""
    run = RunResult(
        manifest="qa.yml",
        base_url="http://preview.test",
        started_at="2026-01-01T00:00:00+00:00",
        duration_s=duration,
        tests=tests,
    )
    reporters = [ArtifactsReporter(folder), JUnitReporter(folder)]
    events = [
        RunStarted(manifest="qa.yml", base_url=run.base_url, test_names=[t.name for t in tests]),
        *(TestFinished(result=t) for t in tests),
        RunFinished(result=run),
    ]
    for test in tests:
        (folder / files.test_dir(test.name)).mkdir(parents=True)
        (folder / files.test_dir(test.name) / "final.png").write_bytes(b"png")
    for event in events:
        for reporter in reporters:
            reporter.handle(event)
    return folder


def test_merge_makes_one_run_in_manifest_order_with_every_artifact(tmp_path: Path) -> None:
    one = shard_folder(
        tmp_path / "shard-1",
        [
            result("a", line=3, usage=Usage(llm_calls=1, total_tokens=10), unverified=WORD),
            result("c", Status.FAILED, line=9, usage=Usage(llm_calls=1, total_tokens=10)),
        ],
        duration=20,
    )
    two = shard_folder(
        tmp_path / "shard-2",
        [result("b", line=6, usage=Usage(llm_calls=1, total_tokens=5), unverified=WORD), result("d", Status.SKIPPED, line=12)],
        duration=30,
    )
    proc = run_in_process(["merge", str(one), str(two), "--out", str(tmp_path / "merged")], env=clean_env())
    assert proc.returncode == 1, proc.stderr  # one shard had a failure
    results = json.loads((tmp_path / "merged" / "results.json").read_text(encoding="utf-8"))
    assert [t["name"] for t in results["tests"]] == ["a", "b", "c", "d"]
    assert results["totals"] == {
        "skipped": 1,
        "passed": 2,
        "failed": 1,
        "errored": 0,
        "total": 4,
        "flaky": 0,
        "healed": 0,
        "fell_back": 0,
        "regressions": 0,
        "vacuous": 0,
        "changed": 0,
        "unverified": 2,  # one passed on the agent's word in each shard
    }
    assert results["usage"]["total_tokens"] == 25 and results["duration_s"] == 30
    for t in results["tests"]:
        assert (tmp_path / "merged" / t["artifacts"]["final_screenshot"]).is_file()
    suite = next(iter(JUnitXml.fromfile(str(tmp_path / "merged" / "junit.xml"))))
    assert (suite.tests, suite.failures, suite.skipped) == (4, 1, 1)
    assert "FAILED" in proc.stdout and "c" in proc.stdout


def test_a_test_in_two_shards_or_a_folder_without_results_is_a_usage_error(tmp_path: Path) -> None:
    one = shard_folder(tmp_path / "one", [result("a", line=3)], duration=1)
    proc = run_in_process(["merge", str(one), str(one), "--out", str(tmp_path / "m")], env=clean_env())
    assert proc.returncode == 2 and "test 'a' is in more than one shard's results" in proc.stderr
    (tmp_path / "empty").mkdir()
    proc = run_in_process(["merge", str(tmp_path / "empty"), "--out", str(tmp_path / "m")], env=clean_env())
    assert proc.returncode == 2 and "has no results.json" in proc.stderr


def test_shards_of_a_real_run_cover_every_test_once(tmp_path: Path) -> None:
    names = [f"test {i}" for i in range(7)]
    manifest = tmp_path / "qa.yml"
    manifest.write_text(
        "version: 1\ntests:\n"
        + "".join(textwrap.indent(f"- name: {n}\n  task: never runs\n  skip: parked\n", "  ") for n in names),
        encoding="utf-8",
    )
    base = ["run", str(manifest), "--base-url", "http://127.0.0.1:9", "--api-key", "k", "--llm-base-url", "http://127.0.0.1:9/v1"]
    shards = []
    for i in (1, 2, 3):
        proc = run_in_process([*base, "--shard", f"{i}/3", "--out", str(tmp_path / f"s{i}")], env=clean_env())
        assert proc.returncode == 0, proc.stderr
        shards.append([t["name"] for t in json.loads((tmp_path / f"s{i}" / "results.json").read_text())["tests"]])
    assert sorted(n for s in shards for n in s) == sorted(names) and {len(s) for s in shards} == {2, 3}
    proc = run_in_process(
        ["merge", *(str(tmp_path / f"s{i}") for i in (1, 2, 3)), "--out", str(tmp_path / "all")], env=clean_env()
    )
    assert proc.returncode == 0, proc.stderr
    assert [t["name"] for t in json.loads((tmp_path / "all" / "results.json").read_text())["tests"]] == names
    proc = run_in_process([*base, "--shard", "4/3"], env=clean_env())
    assert proc.returncode == 2 and "--shard must look like I/N" in proc.stderr


def test_a_reporter_that_breaks_while_merging_fails_the_merge_and_is_named(tmp_path: Path) -> None:
    shard = shard_folder(tmp_path / "shard", [result("a", line=3)], duration=1)
    (tmp_path / "merged" / "report.html").mkdir(parents=True)  # the HTML reporter cannot put its file there
    proc = run_in_process(["merge", str(shard), "--out", str(tmp_path / "merged"), "--fail-on", "never"], env=clean_env())
    assert proc.returncode == 1, proc.stderr  # every test passed, but an output is missing
    assert proc.stderr.count("preview-qa: error:") == 1 and "reporter HtmlReporter failed" in proc.stderr, proc.stderr
    assert (tmp_path / "merged" / "junit.xml").is_file()  # the other reporters still wrote theirs


def test_merging_in_github_actions_comments_once_with_every_shards_tests(tmp_path: Path, httpserver: HTTPServer) -> None:
    github = FakeGitHub(httpserver)
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    one = shard_folder(tmp_path / "one", [result("first shard's test", line=3)], duration=1)
    two = shard_folder(tmp_path / "two", [result("second shard's test", Status.FAILED, line=6)], duration=1)
    env = clean_env(**runner_env(workspace, github.url))
    proc = run_in_process(["merge", str(one), str(two), "--out", str(workspace / "merged")], env=env)
    assert proc.returncode == 1, proc.stderr
    assert len(github.comments) == 1
    assert "first shard" in github.comments[0]["body"] and "second shard" in github.comments[0]["body"]


def test_an_exploration_survives_the_merge_and_fails_it_with_fail_on_findings(tmp_path: Path) -> None:
    """Before, merge dropped `explore`: `merge --fail-on findings` passed whatever the PR broke."""
    from preview_qa.results import ExploreResult, Finding, FindingKind

    one = shard_folder(tmp_path / "one", [result("a", line=3)], duration=5)
    two = shard_folder(tmp_path / "two", [result("b", line=6)], duration=5)
    breaks = Finding(
        kind=FindingKind.HTTP_ERROR,
        url="/orders",
        summary="GET /api/orders answered 500",
        on_baseline=False,
        confirmed=True,
        reason="its repro fails on the preview and passes on the baseline",
        repro={"name": "r"},
    )
    explored = ExploreResult(base_url="http://preview.test", baseline_url="http://main.test", started_at="t", findings=[breaks])
    run = json.loads((two / files.RESULTS).read_text(encoding="utf-8"))
    (two / files.RESULTS).write_text(json.dumps({**run, "explore": explored.model_dump(mode="json")}), encoding="utf-8")
    (two / files.EXPLORE).mkdir()
    (two / files.EXPLORE / "findings.md").write_text("## This PR breaks 1 thing\n", encoding="utf-8")
    out = tmp_path / "merged"
    args = ["merge", str(one), str(two), "--out", str(out)]
    assert run_in_process(args, env=clean_env()).returncode == 0
    failed = run_in_process([*args, "--fail-on", "findings"], env=clean_env())
    assert failed.returncode == 1, failed.stdout + failed.stderr
    merged = json.loads((out / files.RESULTS).read_text(encoding="utf-8"))
    assert merged["explore"]["findings"][0]["url"] == "/orders" and (out / files.EXPLORE / "findings.md").is_file()
