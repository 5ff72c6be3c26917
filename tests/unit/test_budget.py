"""Budgets: the command line's per-test limits outrank the manifest's; a spent run budget starts no further test."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from preview_qa import cli
from preview_qa.config import DEFAULT_CACHE, RunConfig
from preview_qa.engine.agent_port import AgentRequest
from preview_qa.manifest.models import TestSpec
from preview_qa.reporters.junit import render
from preview_qa.results import Status, Usage
from preview_qa.verdict.agent_run import AgentRun, DoneReport
from tests.builders import PASS, run, specs_named


def spending(tokens: int, cost: float | None = None) -> Any:
    seen: list[TestSpec] = []

    async def agent(request: AgentRequest) -> AgentRun:
        seen.append(request.spec)
        return AgentRun(done=PASS, usage=Usage(llm_calls=1, total_tokens=tokens, cost_usd=cost))

    return agent, seen


def test_a_spent_run_budget_errors_the_tests_not_yet_started_naming_the_budget() -> None:
    agent, seen = spending(100)
    result, _ = run(specs_named("a", "b", "c", "d"), agent, concurrency=1, run_max_tokens=150)
    assert [s.name for s in seen] == ["a", "b"]
    assert [t.status for t in result.tests] == [Status.PASSED, Status.PASSED, Status.ERRORED, Status.ERRORED]
    assert result.tests[2].reason == "run budget exceeded: --run-max-tokens=150 (used 200)"
    assert result.tests[3].execution == "none" and result.usage.total_tokens == 200


def test_a_run_cost_budget_names_the_money_spent() -> None:
    agent, _ = spending(10, cost=0.03)
    result, _ = run(specs_named("a", "b"), agent, concurrency=1, run_max_cost_usd=0.02)
    assert result.tests[1].reason == "run budget exceeded: --run-max-cost-usd=0.02 (spent $0.0300)"


def test_the_command_line_budget_outranks_the_manifest() -> None:
    agent, seen = spending(1)
    run(specs_named("a", max_tokens=1000, max_cost_usd=5.0), agent, max_tokens=7, max_cost_usd=0.5)
    assert (seen[0].max_tokens, seen[0].max_cost_usd) == (7, 0.5)
    agent, seen = spending(1)
    run(specs_named("a", max_tokens=1000), agent)
    assert (seen[0].max_tokens, seen[0].max_cost_usd) == (1000, None)


def test_tokens_and_cost_are_junit_properties_per_test_and_for_the_run() -> None:
    agent, _ = spending(120, cost=0.25)
    result, _ = run(specs_named("a", "b"), agent)
    xml = render(result.tests, result).decode()
    assert xml.count('<property name="total_tokens" value="120"/>') == 2
    assert '<property name="total_tokens" value="240"/>' in xml and '<property name="cost_usd" value="0.500000"/>' in xml
    assert '<property name="path" value="agent"/>' in xml
    assert json.loads(json.dumps(result.usage.model_dump()))["cost_usd"] == 0.5


def test_the_agents_own_budget_stop_is_an_error_naming_it() -> None:
    async def agent(request: AgentRequest) -> AgentRun:
        return AgentRun(done=DoneReport(text=None, success=None), infrastructure_error="budget exceeded: max_tokens=7 (used 9)")

    result, _ = run(specs_named("a"), agent, max_tokens=7)
    assert (result.tests[0].status, result.tests[0].reason) == (Status.ERRORED, "budget exceeded: max_tokens=7 (used 9)")


def test_budget_cache_and_shard_flags_reach_the_run_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    manifest = tmp_path / "qa.yml"
    manifest.write_text("version: 1\ntests:\n  - {name: a, task: do it}\n")
    seen: list[RunConfig] = []
    monkeypatch.setattr(cli.run, "execute", lambda spec, config, verbose, plan=None, explore=None: seen.append(config))
    args = [
        "run",
        str(manifest),
        "--base-url",
        "https://pr-7.example.com",
        "--max-tokens",
        "900",
        "--max-cost-usd",
        "0.2",
        "--run-max-tokens",
        "5000",
        "--cache",
        str(tmp_path / "c"),
        "--shard",
        "2/3",
    ]
    assert CliRunner().invoke(cli.main, args, env={"INPUT_RUN-MAX-COST-USD": "1.5"}).exit_code == 0
    config = seen[-1]
    assert (config.max_tokens, config.max_cost_usd, config.run_max_tokens, config.run_max_cost_usd) == (900, 0.2, 5000, 1.5)
    assert (config.cache, config.shard) == (tmp_path / "c", (2, 3))
    assert CliRunner().invoke(cli.main, [*args, "--no-cache"]).exit_code == 0 and seen[-1].cache is None
    assert CliRunner().invoke(cli.main, args[:4]).exit_code == 0 and seen[-1].cache == Path(DEFAULT_CACHE)
    refused = CliRunner().invoke(cli.main, [*args[:4], "--max-cost-usd", "0"])
    assert refused.exit_code == 2 and "--max-cost-usd" in refused.output
