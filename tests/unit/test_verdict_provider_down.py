"""A provider down for the whole run: after a few tests in a row get no answer, the rest error at once (fake agent)."""

from __future__ import annotations

from preview_qa.engine.agent_port import AgentRequest
from preview_qa.engine.runner import PROVIDER_DOWN_AFTER
from preview_qa.results import Status, Usage
from preview_qa.verdict.agent_run import AgentRun, LLMFault
from tests.builders import PASS, run, specs_named

DOWN = LLMFault(kind="provider", purpose="agent", status=500, message="Error code: 500 - scripted HTTP 500")


def test_the_rest_of_the_run_errors_fast_once_the_provider_is_down() -> None:
    started: list[str] = []

    async def agent(request: AgentRequest) -> AgentRun:
        started.append(request.spec.name)
        return AgentRun(llm_faults=[DOWN] * 3, usage=Usage(llm_calls=3))

    result, _ = run(specs_named(*(f"t{i}" for i in range(6))), agent, concurrency=1)
    assert started == [f"t{i}" for i in range(PROVIDER_DOWN_AFTER)]
    assert all(t.status is Status.ERRORED for t in result.tests)
    assert result.tests[0].reason == "LLM provider error: HTTP 500: Error code: 500 - scripted HTTP 500"
    assert result.tests[-1].reason == (
        f"LLM provider down: {PROVIDER_DOWN_AFTER} tests in a row got no answer "
        "(last: HTTP 500: Error code: 500 - scripted HTTP 500); this test was not started"
    )
    assert result.tests[-1].execution == "none" and result.tests[-1].steps == 0


def test_a_provider_that_answers_in_between_resets_the_count() -> None:
    async def agent(request: AgentRequest) -> AgentRun:
        if request.spec.name.startswith("ok"):
            return AgentRun(done=PASS, usage=Usage(llm_calls=1))
        return AgentRun(llm_faults=[DOWN], usage=Usage(llm_calls=1))

    names = ["down1", "down2", "ok1", "down3", "down4", "ok2"]
    result, _ = run(specs_named(*names), agent, concurrency=1)
    assert [t.status for t in result.tests] == [
        Status.ERRORED,
        Status.ERRORED,
        Status.PASSED,
        Status.ERRORED,
        Status.ERRORED,
        Status.PASSED,
    ]


def test_an_intermittent_provider_never_trips_the_breaker() -> None:
    async def agent(request: AgentRequest) -> AgentRun:
        return AgentRun(llm_faults=[DOWN] * 2, usage=Usage(llm_calls=3))  # one of three calls was answered

    result, _ = run(specs_named(*(f"t{i}" for i in range(5))), agent, concurrency=1)
    assert all(t.reason.startswith("LLM provider error: HTTP 500") for t in result.tests)


def test_invalid_output_and_failures_never_trip_the_breaker() -> None:
    garbage = LLMFault(kind="invalid_output", purpose="agent", status=None, message="not valid JSON")

    async def agent(request: AgentRequest) -> AgentRun:
        return AgentRun(llm_faults=[garbage], usage=Usage(llm_calls=1))

    result, _ = run(specs_named(*(f"t{i}" for i in range(5))), agent, concurrency=1)
    assert all(t.status is Status.FAILED for t in result.tests)
    assert not any("provider down" in t.reason for t in result.tests)
