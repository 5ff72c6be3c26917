"""Outputs fail closed: a reporter that breaks during a real run makes `preview-qa run` exit 1 with one line naming
it, although every test passed, and the other reporters still write theirs. A crash of our own outside any test is
told apart from it: exit 3, one line that points at the traceback's log."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from preview_qa.engine.runner import Runner
from preview_qa.reporters.output.files import CRASH_LOG
from preview_qa.results import RunResult
from tests.conftest import CliRun

pytestmark = pytest.mark.e2e

MANIFEST = """
version: 1
tests:
  - name: price shown
    start: /product
    task: "[price] Read the price."
    expect: {text: ["$19.99"]}
"""
SCENARIOS = [{"match": "[price]", "turns": [{"done": {"status": "pass", "reason": "It shows $19.99."}}]}]


def test_a_junit_writer_that_breaks_fails_the_run_and_is_named(run_cli: Callable[..., CliRun], tmp_path: Path) -> None:
    (tmp_path / "out" / "junit.xml").mkdir(parents=True)  # the JUnit reporter cannot put its file there
    run = run_cli(MANIFEST, SCENARIOS)
    assert run.test("price shown")["status"] == "passed"  # the tests themselves passed...
    assert run.exit_code == 1, run.stderr  # ...but an output is missing, so the run is not a success
    errors = [line for line in run.stderr.splitlines() if line.startswith("preview-qa: error:")]
    assert len(errors) == 1 and "reporter JUnitReporter failed" in errors[0], run.stderr
    assert "Traceback" not in run.stderr and "internal error" not in run.stderr and not (run.out / CRASH_LOG).exists()
    assert (run.out / "report.html").is_file() and (run.out / "results.json").is_file()  # the others still wrote theirs


def test_a_crash_of_ours_outside_any_test_exits_3_with_one_line_pointing_at_its_log(
    run_cli: Callable[..., CliRun], monkeypatch: pytest.MonkeyPatch
) -> None:
    async def crash(self: Runner) -> RunResult:  # once the reporters, the safe stderr and the browsers are set up
        raise RuntimeError("injected into the run's composition, with the API key test-key in its message")

    monkeypatch.setattr(Runner, "run", crash)
    run = run_cli(MANIFEST, SCENARIOS)
    assert run.exit_code == 3, run.stderr
    log = run.out / CRASH_LOG
    (said,) = [line for line in run.stderr.splitlines() if line.startswith("preview-qa:")]
    assert said.startswith("preview-qa: internal error: RuntimeError: injected into the run's composition"), said
    assert said.endswith(f"(a bug in preview-qa, not a verdict on your app: its traceback is in {log}; please report it)")
    trace = log.read_text(encoding="utf-8")
    assert trace.startswith("Traceback (most recent call last):") and "in crash" in trace
    assert "RuntimeError: injected into the run's composition, with the API key" in trace
    assert "Traceback" not in run.stderr
    assert "test-key" not in trace + run.stderr  # the log is redacted as stderr is
