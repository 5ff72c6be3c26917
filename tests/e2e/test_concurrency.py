"""Concurrency and hard timeouts end to end: a test stuck on its LLM times out as errored with its evidence kept, while
another test runs beside it and finishes first; results stay in manifest order."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

from tests.conftest import CliRun

pytestmark = pytest.mark.e2e

MANIFEST = """
version: 1
defaults: {max_steps: 4}
tests:
  - name: stuck on the LLM
    start: /product
    task: "[stuck] Read the price."
    timeout: 30
  - name: quick
    start: /product
    task: "[quick] Read the price."
    expect: {text: ["$19.99"]}
"""
SCENARIOS = [
    {"match": "[stuck]", "turns": [{"actions": [{"scroll": {"down": True}}]}, {"hang": True}]},
    {"match": "[quick]", "turns": [{"done": {"status": "pass", "reason": "It shows $19.99."}}]},
]


def test_a_timed_out_test_keeps_its_evidence_while_the_other_runs_beside_it(run_cli: Callable[..., CliRun]) -> None:
    run = run_cli(MANIFEST, SCENARIOS, "--concurrency", "2")
    stuck, quick = run.results["tests"]  # manifest order, whichever finished first
    assert (stuck["name"], quick["name"]) == ("stuck on the LLM", "quick")
    assert (stuck["status"], stuck["reason"]) == ("errored", "timed out after 30 s"), stuck
    assert stuck["steps"] >= 1 and stuck["artifacts"]["screenshots"] and stuck["artifacts"]["final_screenshot"]
    assert (run.out / stuck["artifacts"]["final_screenshot"]).is_file()
    assert quick["status"] == "passed", quick
    finished = [m.group(1) for m in re.finditer(r"^\s+\S+ (?:passed|errored) (.+?) \(", run.stdout, re.M)]
    assert finished == ["quick", "stuck on the LLM"]  # it ran while the other waited for its LLM
    assert run.exit_code == 1
