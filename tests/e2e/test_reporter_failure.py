"""Outputs fail closed: a reporter that breaks during a real run makes `preview-qa run` exit non-zero with one line
naming it, although every test passed, and the other reporters still write theirs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

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
    assert "Traceback" not in run.stderr
    assert (run.out / "report.html").is_file() and (run.out / "results.json").is_file()  # the others still wrote theirs
