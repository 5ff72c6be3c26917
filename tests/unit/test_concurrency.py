"""The runner's scheduling with a fake agent (no browser): concurrency bound, manifest order, hard timeouts, replay fallback."""

from __future__ import annotations

import asyncio
import py_compile
import subprocess
import sys
from pathlib import Path

import pytest

from preview_qa.engine import runner as runner_mod
from preview_qa.engine.agent_port import AgentRequest, Recording
from preview_qa.events import Observed, TestFinished
from preview_qa.results import Execution, Status, Usage
from preview_qa.verdict.agent_run import AgentRun
from tests.builders import PASS, run, specs_named
from tests.repo import ROOT


def test_no_more_tests_run_at_once_than_the_concurrency_and_results_keep_manifest_order() -> None:
    running, peak = 0, 0

    async def agent(request: AgentRequest) -> AgentRun:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.01 * (10 - int(request.spec.name[1:])))  # later tests finish first
        running -= 1
        return AgentRun(done=PASS, steps=1)

    result, events = run(specs_named(*(f"t{i}" for i in range(7))), agent, concurrency=3)
    assert peak == 3
    assert [t.name for t in result.tests] == [f"t{i}" for i in range(7)]
    finished = [e.result.name for e in events if isinstance(e, TestFinished)]
    assert finished != [t.name for t in result.tests]  # they did finish out of order
    assert result.status is Status.PASSED


def test_a_test_whose_agent_ignores_its_timeout_is_stopped_and_the_others_go_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner_mod, "TEARDOWN_GRACE_S", 0.2)

    async def agent(request: AgentRequest) -> AgentRun:
        if request.spec.name == "stuck":
            await asyncio.sleep(3600)
        return AgentRun(done=PASS)

    result, _ = run([*specs_named("stuck", timeout=0.1), *specs_named("fine")], agent, concurrency=1)
    stuck, fine = result.tests
    assert (stuck.status, stuck.reason) == (Status.ERRORED, "timed out after 0.1 s (and its teardown hung)")
    assert fine.status is Status.PASSED


RECORDING = Recording(origin="http://preview.test", history={"history": []})


def test_a_replay_that_does_not_hold_falls_back_to_the_agent_and_counts_both_costs() -> None:
    calls: list[Recording | None] = []

    async def agent(request: AgentRequest) -> AgentRun:
        calls.append(request.recording)
        if request.recording is not None:
            return AgentRun(
                execution=Execution.REPLAYED,
                replay_error="step 2: click button 'Log in': element not found",
                usage=Usage(llm_calls=0),
            )
        return AgentRun(done=PASS, usage=Usage(llm_calls=2, total_tokens=50))

    result, events = run(specs_named("t", expect={"url": "/x"}), agent, recordings=lambda spec: RECORDING)
    assert calls == [RECORDING, None]
    test = result.tests[0]
    assert (test.status, test.execution, test.usage.llm_calls, test.usage.total_tokens) == (
        Status.PASSED,
        "replay-fell-back",
        2,
        50,
    )
    note = next(e for e in events if isinstance(e, Observed) and e.kind == "replay_fell_back")
    assert note.detail["reason"] == "replay drifted at step 2: click button 'Log in': element not found"
    assert test.replay_drift == note.detail["reason"] and test.reason == "fine"  # the reason stays the agent's


def test_a_replay_that_holds_is_the_verdict_and_the_agent_never_runs() -> None:
    calls: list[Recording | None] = []

    async def agent(request: AgentRequest) -> AgentRun:
        calls.append(request.recording)
        return AgentRun(execution=Execution.REPLAYED, steps=3, expectations=[], done=PASS)

    result, _ = run(specs_named("t"), agent, recordings=lambda spec: RECORDING)
    assert calls == [RECORDING] and (result.tests[0].status, result.tests[0].execution) == (Status.PASSED, "replayed")


def test_without_a_recording_the_agent_runs() -> None:
    async def agent(request: AgentRequest) -> AgentRun:
        assert request.recording is None
        return AgentRun(done=PASS)

    result, _ = run(specs_named("t"), agent, recordings=lambda spec: None)
    assert result.tests[0].execution == "agent"


def test_the_speed_bench_starts_and_refuses_an_unknown_bench(tmp_path: Path) -> None:
    """bench/ is not run by the tests (it prints figures); this only keeps its scripts from rotting."""
    bench = ROOT / "bench"
    py_compile.compile(str(bench / "bare_agent.py"), doraise=True, cfile=str(tmp_path / "bare_agent.pyc"))
    ok = subprocess.run([sys.executable, str(bench / "speed.py"), "--help"], capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0 and "overhead, concurrency, realistic, replay" in ok.stdout
    bad = subprocess.run([sys.executable, str(bench / "speed.py"), "nope"], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "no bench called nope" in bad.stderr
