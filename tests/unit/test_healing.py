"""Healing in plain sight: a drifted replay that the agent then passed is passed and healed, counted in every output;
`--fail-on healed` fails the run, `heal: false` fails the test instead. A replay the page check's LLM answer or our own
trouble left unjudged falls back to the agent without being healed. A pull request's fall-back of any kind keeps the
cached recording."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from preview_qa.config import FailOn, RunConfig, fall_back_recordings_kept
from preview_qa.engine.agent_port import AgentRequest, Recording
from preview_qa.engine.replay_cache import CacheReporter, RecordingCache
from preview_qa.events import AgentHistory, RunFinished, TestFinished
from preview_qa.manifest.models import Manifest, TestSpec
from preview_qa.reporters.artifacts import results_document
from preview_qa.reporters.console import ConsoleReporter
from preview_qa.reporters.github.commands import outputs
from preview_qa.reporters.github.markdown import render_markdown
from preview_qa.reporters.junit import render
from preview_qa.results import Execution, ExpectationOutcome, FallBack, RunResult, Status, Usage
from preview_qa.verdict.agent_run import AgentRun, DoneReport, LLMFault, ServerError
from tests.builders import PASS, run, specs_named

RECORDING = Recording(origin="http://preview.test", history={"history": []})
DRIFT = "step 2: click button 'Add': element not found"


def drifting_agent(calls: list[Recording | None]) -> Any:
    async def agent(request: AgentRequest) -> AgentRun:
        calls.append(request.recording)
        if request.recording is not None:
            return AgentRun(execution=Execution.REPLAYED, replay_error=DRIFT)
        return AgentRun(done=PASS, usage=Usage(llm_calls=2))

    return agent


def healed_run(**spec: Any) -> tuple[RunResult, list[Recording | None]]:
    calls: list[Recording | None] = []
    result, _ = run(
        specs_named("add a todo", expect={"url": "/x"}, **spec), drifting_agent(calls), recordings=lambda s: RECORDING
    )
    return result, calls


def test_a_drifted_replay_the_agent_passed_is_passed_and_healed_and_only_fail_on_healed_fails_the_run() -> None:
    result, calls = healed_run()
    test = result.tests[0]
    assert (test.status, test.healed, calls) == (Status.PASSED, True, [RECORDING, None])
    assert test.replay_drift == f"replay drifted at {DRIFT}"  # the recorded step and why it no longer held
    assert test.marks[0] == "healed: the replay drifted, the agent passed"
    assert not FailOn.FAILED.fails(result)
    assert FailOn.HEALED.fails(result)


def test_a_replay_that_held_is_not_healed_and_fail_on_healed_still_fails_on_failures() -> None:
    async def agent(request: AgentRequest) -> AgentRun:
        return AgentRun(execution=Execution.REPLAYED, done=PASS)

    result, _ = run(specs_named("t"), agent, recordings=lambda s: RECORDING)
    assert (result.tests[0].status, result.tests[0].healed) == (Status.PASSED, False)
    assert not FailOn.HEALED.fails(result)
    failed = result.model_copy(update={"tests": [result.tests[0].model_copy(update={"status": Status.FAILED})]})
    assert FailOn.HEALED.fails(failed)


def test_heal_false_fails_the_drifted_replay_without_running_the_agent() -> None:
    result, calls = healed_run(heal=False)
    test = result.tests[0]
    assert calls == [RECORDING]  # no agent, no LLM cost
    assert (test.status, test.healed) == (Status.FAILED, False)
    assert test.reason == f"replay drifted at {DRIFT}; heal: false, so the agent did not take over"


def test_the_healed_count_reaches_every_output(tmp_path: Path) -> None:
    result, _ = healed_run()
    assert results_document(result)["totals"]["healed"] == 1
    assert results_document(result)["schema_version"] == 17
    assert json.loads(result.tests[0].model_dump_json())["healed"] is True
    assert "healed<<" in outputs(result, tmp_path) and "\n1\n" in outputs(result, tmp_path).split("healed<<", 1)[1]
    summary = render_markdown(result, str, None, 60_000)
    assert "1 passed · 1 healed (replay drifted, the agent passed)" in summary
    assert "🩹 **Healed: 1**: add a todo (the replay drifted and the agent passed instead;" in summary
    xml = render(result.tests, result).decode()
    assert '<property name="healed" value="true"/>' in xml
    stream = io.StringIO()
    console = ConsoleReporter(stream, width=200)
    console.handle(TestFinished(result=result.tests[0]))
    console.handle(RunFinished(result=result))
    assert f"replay drifted at {DRIFT}\n      healed: instead, the agent passed in 0 step(s) of its own" in stream.getvalue()
    assert "PASSED: 1 passed, 1 healed" in stream.getvalue()


def replayed_then_agent(replay: AgentRun, **spec: Any) -> tuple[RunResult, list[Recording | None]]:
    """A test whose replay ended as `replay`, and whose agent then passes."""
    calls: list[Recording | None] = []

    async def agent(request: AgentRequest) -> AgentRun:
        calls.append(request.recording)
        return replay if request.recording is not None else AgentRun(done=PASS, usage=Usage(llm_calls=2))

    result, _ = run(specs_named("t", **spec), agent, recordings=lambda s: RECORDING)
    return result, calls


GARBAGE = AgentRun(
    execution=Execution.REPLAYED,
    llm_faults=[LLMFault(kind="invalid_output", purpose="agent", status=None, message="not JSON")],
    usage=Usage(llm_calls=1),
)
CHECK_FAILED = ExpectationOutcome(check="url", expected="URL containing '/x'", found="http://p/y", ok=False)
REPLAYS = {
    "garbage from the page check": (GARBAGE, FallBack.LLM_ANSWER),
    "a provider error on the page check": (
        AgentRun(execution=Execution.REPLAYED, llm_faults=[LLMFault("provider", "agent", 500, "down")]),
        FallBack.LLM_ANSWER,
    ),
    "a report breaking its schema": (
        AgentRun(execution=Execution.REPLAYED, done=DoneReport(text='{"status": "maybe"}', success=None)),
        FallBack.LLM_ANSWER,
    ),
    "a browser crash": (AgentRun(execution=Execution.REPLAYED, infrastructure_error="the browser crashed"), FallBack.TOOL),
    "a drift": (AgentRun(execution=Execution.REPLAYED, replay_error=DRIFT), FallBack.PAGE_CHANGED),
    "a check failing on the final page": (
        AgentRun(execution=Execution.REPLAYED, done=PASS, expectations=[CHECK_FAILED]),
        FallBack.PAGE_CHANGED,
    ),
    "a server error after an action, checks holding": (
        AgentRun(
            execution=Execution.REPLAYED,
            expectations=[CHECK_FAILED.model_copy(update={"ok": True})],
            server_errors=[ServerError("POST", "/api/save", 500, "'Save'")],
        ),
        FallBack.PAGE_CHANGED,
    ),
    "a valid verdict of fail": (
        AgentRun(execution=Execution.REPLAYED, done=DoneReport(text='{"status": "fail", "reason": "gone"}', success=None)),
        FallBack.PAGE_CHANGED,
    ),
}


@pytest.mark.parametrize("case", list(REPLAYS))
def test_only_a_page_that_changed_heals(case: str) -> None:
    replay, cause = REPLAYS[case]
    result, calls = replayed_then_agent(replay)
    test = result.tests[0]
    assert (test.status, test.execution, test.fell_back) == (Status.PASSED, Execution.REPLAY_FELL_BACK, cause)
    assert test.healed is (cause is FallBack.PAGE_CHANGED) and calls == [RECORDING, None]
    assert FailOn.HEALED.fails(result) is test.healed
    if not test.healed:  # and its agent's pass quoted nothing, in a test without checks: on the agent's word
        assert test.marks == [f"fell back, not healed: {cause.words}", test.unverified] and test.unverified
        assert result.healed == [] and results_document(result)["totals"]["healed"] == 0


def test_heal_false_lets_the_agent_run_after_an_unusable_answer_but_not_after_a_drift() -> None:
    result, calls = replayed_then_agent(GARBAGE, heal=False)
    assert (result.tests[0].status, result.tests[0].fell_back, calls) == (Status.PASSED, FallBack.LLM_ANSWER, [RECORDING, None])
    result, calls = replayed_then_agent(AgentRun(execution=Execution.REPLAYED, replay_error=DRIFT), heal=False)
    assert (result.tests[0].status, result.tests[0].fell_back, calls) == (Status.FAILED, None, [RECORDING])


def test_a_fall_back_is_shown_for_what_it_is(tmp_path: Path) -> None:
    result, _ = replayed_then_agent(GARBAGE)
    assert json.loads(result.tests[0].model_dump_json())["fell_back"] == "llm_answer"
    summary = render_markdown(result, str, None, 60_000)
    assert "1 passed · 1 fell back to the agent (not healed) · 1 on the agent's word" in summary and "Healed" not in summary
    assert "fell back, not healed\\: the page check's LLM answer was unusable" in summary
    assert "| replay → agent (3 LLM calls) |" in summary
    xml = render(result.tests, result).decode()
    assert '<property name="fell_back" value="llm_answer"/>' in xml and 'name="healed"' not in xml
    stream = io.StringIO()
    console = ConsoleReporter(stream, width=200)
    console.handle(TestFinished(result=result.tests[0]))
    console.handle(RunFinished(result=result))
    said = stream.getvalue()
    fell_back = "(fell back, not healed: the page check's LLM answer was unusable)"
    assert f"{fell_back} (on the agent's word: it quoted nothing" in said
    assert "no page check) t (0.0s, replay → agent (3 LLM" in said
    assert "PASSED: 1 passed, 1 fell back (not healed)" in said and "healed: instead" not in said


def cache_reporter(tmp_path: Path, keep: bool) -> tuple[CacheReporter, RecordingCache, TestSpec]:
    spec = specs_named("t", expect={"url": "/x"})[0]
    manifest = Manifest(version=1, tests=[spec])
    cache = RecordingCache(tmp_path, manifest, "openai", "m")
    return CacheReporter(cache, manifest, RunConfig(Path("qa.yml"), "http://preview.test"), keep_fall_backs=keep), cache, spec


@pytest.mark.parametrize("keep", [True, False])
@pytest.mark.parametrize("case", ["a drift", "garbage from the page check", "a browser crash"])
def test_any_fall_back_replaces_the_recording_only_where_fall_backs_are_kept(tmp_path: Path, keep: bool, case: str) -> None:
    reporter, cache, spec = cache_reporter(tmp_path, keep)
    cache.store(spec, "http://preview.test", {"history": ["from main"]})
    result, _ = replayed_then_agent(REPLAYS[case][0], expect={"url": "/x"})
    reporter.handle(AgentHistory(name=spec.name, history={"history": ["the agent's"]}))
    reporter.handle(TestFinished(result=result.tests[0]))
    kept = cache.load(spec)
    assert kept is not None and kept.history == {"history": ["the agent's"] if keep else ["from main"]}


def github(tmp_path: Path, event: str, ref: str, default: str = "main") -> dict[str, str]:
    path = tmp_path / "event.json"
    path.write_text(json.dumps({"repository": {"default_branch": default}}), encoding="utf-8")
    return {"GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": event, "GITHUB_REF_NAME": ref, "GITHUB_EVENT_PATH": str(path)}


def test_fall_back_recordings_are_kept_on_the_default_branch_and_locally_only(tmp_path: Path) -> None:
    assert fall_back_recordings_kept({}) is True
    assert fall_back_recordings_kept(github(tmp_path, "push", "main")) is True
    assert fall_back_recordings_kept(github(tmp_path, "push", "feature")) is False
    assert fall_back_recordings_kept(github(tmp_path, "pull_request", "42/merge")) is False
    assert fall_back_recordings_kept(github(tmp_path, "pull_request", "main")) is False
    assert fall_back_recordings_kept({**github(tmp_path, "push", "main"), "GITHUB_EVENT_PATH": "/nowhere"}) is False
