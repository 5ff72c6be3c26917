"""Concurrency and hard timeouts end to end: a test whose slow LLM keeps it busy past its timeout ends errored with its
evidence kept, while another test runs beside it and finishes first; results stay in manifest order."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

from tests.conftest import CliRun

pytestmark = pytest.mark.e2e

MANIFEST = """
version: 1
tests:
  - name: never finishes
    start: /product
    task: "[stuck] Read the price."
    timeout: 25
    max_steps: 100
  - name: quick
    start: /product
    task: "[quick] Read the price."
    expect: {text: ["$19.99"]}
"""
SCENARIOS = [
    # each answer comes well within one LLM call's own limit (10 s here), but the steps never end
    {"match": "[stuck]", "turns": [{"actions": [{"scroll": {"down": True}}], "delay": 3}]},
    {"match": "[quick]", "turns": [{"done": {"status": "pass", "reason": "It shows $19.99."}}]},
]


def test_a_timed_out_test_keeps_its_evidence_while_the_other_runs_beside_it(run_cli: Callable[..., CliRun]) -> None:
    run = run_cli(MANIFEST, SCENARIOS, "--concurrency", "2")
    stuck, quick = run.results["tests"]  # manifest order, whichever finished first
    assert (stuck["name"], quick["name"]) == ("never finishes", "quick")
    assert (stuck["status"], stuck["reason"]) == ("errored", "timed out after 25 s"), stuck
    assert stuck["steps"] >= 1 and stuck["artifacts"]["screenshots"] and stuck["artifacts"]["final_screenshot"]
    assert (run.out / stuck["artifacts"]["final_screenshot"]).is_file()
    assert quick["status"] == "passed", quick
    finished = [m.group(1) for m in re.finditer(r"^\s+\S+ (?:passed|errored) (.+?) \(", run.stdout, re.M)]
    assert finished == ["quick", "never finishes"]  # it ran while the other waited for its LLM
    assert run.exit_code == 1
