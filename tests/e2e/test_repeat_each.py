"""Flake hunting end to end, with exact steps (no LLM): `run --repeat-each 5` on a test whose page is broken on every
third load reports it flaky with its pass rate (results.json, JUnit, the console, the report), a steady test passing
on every run and a broken one on none; `--last-failed` then runs exactly the test that failed, and `--fail-on flaky`
fails a run whose only trouble is the flaky test."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator

import pytest

from tests.conftest import CliRun, clean_env, preview_qa_run
from tests.site import DemoSite

pytestmark = pytest.mark.e2e

MANIFEST = """\
version: 1
tests:
  - name: one in three
    start: /
    steps:
      - open: /one-in-three?key=repeat-each
        expect: {text: Welcome back, timeout: 1}
  - name: steady
    start: /
    steps:
      - open: /product
        expect: {text: $19.99, timeout: 1}
  - name: always broken
    start: /
    steps:
      - open: /product
        expect: {text: Sold out, timeout: 1}
"""


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, site: DemoSite) -> Iterator[dict[str, CliRun]]:
    folder = tmp_path_factory.mktemp("repeat")
    manifest = folder / "qa.yml"
    manifest.write_text(textwrap.dedent(MANIFEST), encoding="utf-8")

    def cli(out: str, *extra: str) -> CliRun:
        return preview_qa_run(manifest, site.url, folder / out, None, *extra, env=clean_env(), process=True)

    repeated = cli("repeated", "--repeat-each", "5", "--concurrency", "3")
    yield {
        "repeated": repeated,
        "last failed": cli("again", "--last-failed", "--results", str(folder / "repeated")),
        "fail on flaky": cli("flaky", "--repeat-each", "3", "--only", "one in three", "--fail-on", "flaky"),
    }


def test_a_test_failing_one_load_in_three_is_flaky_with_its_rate(runs: dict[str, CliRun]) -> None:
    run = runs["repeated"]
    flaky, steady, broken = run.results["tests"]
    assert (flaky["status"], flaky["flaky"], flaky["attempts"], flaky["passes"]) == ("passed", True, 5, 4)
    assert flaky["pass_rate"] == 0.8
    assert [a["status"] for a in flaky["earlier_attempts"]] == ["passed", "passed", "failed", "passed"]
    assert (steady["status"], steady["flaky"], steady["pass_rate"]) == ("passed", False, 1.0)
    assert (broken["status"], broken["flaky"], broken["pass_rate"]) == ("failed", False, 0.0)
    assert run.exit_code == 1  # the broken test; a flaky one passes, as on a retry
    assert "flaky: passed 4 of 5 runs (80%)" in run.stdout
    assert "flaky: passed 4 of 5 runs (80%)" in (run.out / "report.html").read_text(encoding="utf-8")
    junit = (run.out / "junit.xml").read_text(encoding="utf-8")
    assert 'name="pass_rate" value="0.8"' in junit and "<flakyFailure" in junit


def test_last_failed_runs_exactly_the_failed_test(runs: dict[str, CliRun]) -> None:
    run = runs["last failed"]
    assert [t["name"] for t in run.results["tests"] if t["status"] != "skipped"] == ["always broken"]
    assert run.exit_code == 1


def test_fail_on_flaky_fails_a_run_whose_only_trouble_is_a_flaky_test(runs: dict[str, CliRun]) -> None:
    run = runs["fail on flaky"]
    [test] = [t for t in run.results["tests"] if t["status"] != "skipped"]
    assert (test["status"], test["flaky"], test["passes"]) == ("passed", True, 2)  # loads 6 to 8: the 6th is broken
    assert run.exit_code == 1
