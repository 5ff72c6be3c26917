"""Retries and the baseline, with a fake agent (no browser): what is retried, what attempts add up to, how a run on the
baseline turns a failure into a regression or an old failure; the flags, the manifest keys and the exit code."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from preview_qa.config import FailOn
from preview_qa.engine.agent_port import AgentRequest, Recording
from preview_qa.engine.replay_cache import RecordingCache
from preview_qa.errors import ManifestError
from preview_qa.events import AttemptFinished, Event, Observed, TestFinished
from preview_qa.manifest import loader as manifest
from preview_qa.manifest.models import TestSpec
from preview_qa.results import OtherRun, RunResult, Status, Usage
from preview_qa.verdict.agent_run import AgentRun, DoneReport, LLMFault, SecretAttempt
from tests.builders import PASS, cli_run, result, run, run_of, specs_named

FAIL = DoneReport(text=json.dumps({"status": "fail", "reason": "broken"}), success=True)


def scripted(*outcomes: AgentRun) -> tuple[Any, list[dict[str, Any]]]:
    """An agent that plays `outcomes` in turn (the last repeats) and records how each call was made."""
    calls: list[dict[str, Any]] = []

    async def agent(request: AgentRequest) -> AgentRun:
        calls.append(
            {"spec": request.spec, "url": request.start_url, "hosts": request.allowed_hosts, "recording": request.recording}
        )
        request.emit(Observed(name=request.spec.name, kind="console_error", error=True, detail={"n": len(calls)}))
        trace = outcomes[min(len(calls), len(outcomes)) - 1]
        return AgentRun(
            done=trace.done,
            infrastructure_error=trace.infrastructure_error,
            usage=trace.usage.model_copy(),
            llm_faults=trace.llm_faults,
            secret_attempts=trace.secret_attempts,
        )

    return agent, calls


def test_a_failure_then_a_pass_is_flaky_with_every_attempt_kept_and_labelled() -> None:
    agent, calls = scripted(AgentRun(done=FAIL, usage=Usage(total_tokens=10)), AgentRun(done=PASS, usage=Usage(total_tokens=5)))
    outcome, events = run(specs_named("t", retries=2), agent)
    t = outcome.tests[0]
    assert (t.status, t.attempts, t.flaky, t.usage.total_tokens) == (Status.PASSED, 2, True, 15)
    assert [(a.status, a.reason) for a in t.earlier_attempts] == [(Status.FAILED, "agent: broken")]
    assert len(calls) == 2  # no third attempt after the pass
    labels = [e.label for e in events if isinstance(e, Observed) and e.kind == "console_error"]
    assert labels == ["attempt-1", "attempt-2"]
    assert [e.label for e in events if isinstance(e, AttemptFinished)] == ["attempt-1", "attempt-2"]
    assert [e.result.attempts for e in events if isinstance(e, TestFinished)] == [2]  # one TestFinished, at the end


def test_retries_stop_at_the_limit_and_the_last_attempt_decides() -> None:
    agent, calls = scripted(AgentRun(done=FAIL), AgentRun(infrastructure_error="timed out after 5 s"))
    outcome, _ = run(specs_named("t", retries=2), agent)
    t = outcome.tests[0]
    assert len(calls) == 3 and (t.status, t.reason, t.attempts, t.flaky) == (Status.ERRORED, "timed out after 5 s", 3, False)
    assert [a.status for a in t.earlier_attempts] == [Status.FAILED, Status.ERRORED]


def test_a_test_that_tried_to_send_a_secret_off_is_never_retried_and_fails() -> None:
    agent, calls = scripted(AgentRun(done=PASS, secret_attempts=[SecretAttempt("pw", "collector.example")]), AgentRun(done=PASS))
    outcome, _ = run(specs_named("t", retries=2), agent)
    t = outcome.tests[0]
    assert len(calls) == 1 and t.status is Status.FAILED
    assert t.reason == t.secrets_blocked[0] == "the agent tried to send secret 'pw' to collector.example"


def test_no_retries_no_labels_and_passes_are_never_retried() -> None:
    agent, calls = scripted(AgentRun(done=FAIL))
    outcome, events = run(specs_named("t"), agent)
    assert len(calls) == 1 and outcome.tests[0].attempts == 1
    assert {e.label for e in events if isinstance(e, Observed)} == {None}
    agent, calls = scripted(AgentRun(done=PASS))
    run(specs_named("t", retries=3), agent)
    assert len(calls) == 1


def test_the_command_line_retries_outrank_the_manifest() -> None:
    agent, calls = scripted(AgentRun(done=FAIL))
    run(specs_named("t", retries=3), agent, retries=1)
    assert len(calls) == 2
    agent, calls = scripted(AgentRun(done=FAIL))
    run(specs_named("t", retries=3), agent, retries=0)
    assert len(calls) == 1


def test_attempts_count_against_the_tests_budget_and_the_runs() -> None:
    agent, calls = scripted(AgentRun(done=FAIL, usage=Usage(total_tokens=60)))
    outcome, _ = run(specs_named("t", retries=5, max_tokens=100), agent)
    assert len(calls) == 2 and calls[1]["spec"].max_tokens == 40  # the second attempt gets what is left
    assert outcome.tests[0].usage.total_tokens == 120
    agent, calls = scripted(AgentRun(done=FAIL, usage=Usage(total_tokens=60)))
    run(specs_named("t", retries=5), agent, run_max_tokens=150)
    assert len(calls) == 3  # 60, 120, then 180 >= 150: no fourth


def test_a_test_stopped_by_its_budget_or_the_providers_circuit_breaker_is_not_retried() -> None:
    agent, calls = scripted(
        AgentRun(infrastructure_error="budget exceeded: max_tokens=50 (used 70)", usage=Usage(total_tokens=70))
    )
    run(specs_named("t", retries=3, max_tokens=50), agent)
    assert len(calls) == 1
    down = AgentRun(llm_faults=[LLMFault(kind="provider", purpose="agent", status=503, message="down")], usage=Usage(llm_calls=1))
    agent, calls = scripted(down)
    outcome, _ = run(specs_named("a", "b", "c", "d", retries=1), agent, concurrency=1)
    # a tries twice, b once: the third unanswered run in a row trips the breaker, and nothing more starts.
    assert len(calls) == 3
    assert outcome.tests[3].reason.startswith("LLM provider down")


def test_a_retry_never_replays_a_recorded_trace() -> None:
    agent, calls = scripted(AgentRun(done=FAIL))
    run(specs_named("t", retries=1), agent, recordings=lambda spec, target="preview": Recording(origin="x", history={}))
    assert [c["recording"] is not None for c in calls] == [True, False, False]  # replay, its fallback, the retry


def baseline_run(
    preview: list[AgentRun], baseline: list[AgentRun], names: tuple[str, ...] = ("t",), **config: Any
) -> tuple[RunResult, list[dict[str, Any]], list[Event]]:
    calls: list[dict[str, Any]] = []

    async def agent(request: AgentRequest) -> AgentRun:
        call = {"name": request.spec.name, "url": request.start_url, "hosts": request.allowed_hosts, "origin": request.origin}
        calls.append(call)
        plays = baseline if request.origin == "http://prod.test" else preview
        request.emit(Observed(name=request.spec.name, kind="console_error", error=True, detail={}))
        done = [c for c in calls if c["name"] == call["name"] and c["origin"] == call["origin"]]
        return plays[min(len(done), len(plays)) - 1]

    outcome, events = run(specs_named(*names), agent, baseline_url="http://prod.test", wait_timeout=0, **config)
    return outcome, calls, events


def test_a_failure_that_passes_on_the_baseline_is_a_regression(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("preview_qa.engine.runner.wait_for_preview", _reachable)
    outcome, calls, events = baseline_run(
        [AgentRun(done=FAIL, usage=Usage(total_tokens=3))], [AgentRun(done=PASS, usage=Usage(total_tokens=4))]
    )
    t = outcome.tests[0]
    assert (t.status, t.regression, t.baseline.status if t.baseline else None) == (Status.FAILED, True, Status.PASSED)
    assert t.usage.total_tokens == 7 and outcome.baseline_url == "http://prod.test"
    on_baseline = calls[-1]
    assert on_baseline["url"] == "http://prod.test/" and on_baseline["origin"] == "http://prod.test"
    assert "prod.test" in on_baseline["hosts"] and "preview.test" not in on_baseline["hosts"]
    assert [e.label for e in events if isinstance(e, Observed) and e.kind == "console_error"] == [None, "baseline"]


def test_a_failure_on_both_is_no_regression_and_passes_are_not_rerun(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("preview_qa.engine.runner.wait_for_preview", _reachable)

    async def agent_for(request: AgentRequest) -> AgentRun:
        return AgentRun(done=PASS if request.spec.name == "ok" else FAIL)

    outcome, _ = run(specs_named("ok", "bad"), agent_for, baseline_url="http://prod.test")
    ok, bad = outcome.tests
    assert ok.baseline is None and ok.regression is None
    assert (bad.regression, bad.fails_on_baseline_too) == (False, True)


def test_an_unreachable_baseline_leaves_the_preview_results_and_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    async def unreachable(url: str, *args: Any) -> str:
        return f"ConnectError for {url}: refused"

    monkeypatch.setattr("preview_qa.engine.runner.wait_for_preview", unreachable)
    outcome, calls, _ = baseline_run([AgentRun(done=FAIL)], [AgentRun(done=PASS)])
    assert outcome.baseline_error == "--baseline-url is unreachable: ConnectError for http://prod.test: refused"
    assert len(calls) == 1 and outcome.tests[0].status is Status.FAILED and outcome.tests[0].baseline is None


def test_a_test_that_starts_from_a_saved_login_is_not_compared_on_the_baseline(monkeypatch: pytest.MonkeyPatch) -> None:
    """Its login is the preview's: run signed out on the baseline it would fail there and wrongly excuse itself."""
    from preview_qa.engine.saved_state import BrowserState

    monkeypatch.setattr("preview_qa.engine.runner.wait_for_preview", _reachable)
    origins: list[str | None] = []

    async def agent(request: AgentRequest) -> AgentRun:
        origins.append(request.origin)
        if request.keep_state is not None:
            request.keep_state(BrowserState({"cookies": [{"name": "sid", "value": "s3ss10n", "domain": "preview.test"}]}))
        return AgentRun(done=PASS if request.spec.name == "login" else FAIL)

    tests = [
        TestSpec(name="login", task="log in", save_state="login", line=1),
        TestSpec(name="orders", task="see orders", use_state="login", line=2),
    ]
    outcome, _ = run(tests, agent, baseline_url="http://prod.test")
    orders = outcome.tests[1]
    assert orders.status is Status.FAILED and orders.baseline is not None and orders.regression is False
    assert orders.baseline.status is Status.ERRORED and "saved state 'login'" in orders.baseline.reason
    assert orders.blocks_on_regressions and origins == ["http://preview.test"] * 2  # no browser was opened on the baseline


async def _reachable(*args: Any) -> None:
    return None


def test_fail_on_regressions_fails_for_regressions_errors_and_unconfirmed_failures_only() -> None:
    old = result("t", Status.FAILED, baseline=OtherRun(status=Status.FAILED, reason="x"), regression=False)
    assert not FailOn.REGRESSIONS.fails(run_of(old, result("t", Status.PASSED)))
    assert FailOn.FAILED.fails(run_of(old))
    regressed = result("t", Status.FAILED, baseline=OtherRun(status=Status.PASSED, reason="x"), regression=True)
    assert FailOn.REGRESSIONS.fails(run_of(old, regressed))
    errored = result("t", Status.ERRORED, baseline=OtherRun(status=Status.FAILED, reason="x"))
    assert FailOn.REGRESSIONS.fails(run_of(errored))  # errored tests still fail it
    unconfirmed = result("t", Status.FAILED, baseline=OtherRun(status=Status.ERRORED, reason="x"), regression=False)
    assert FailOn.REGRESSIONS.fails(run_of(unconfirmed))  # the baseline could not tell: fail closed
    assert FailOn.REGRESSIONS.fails(run_of(result("t", Status.FAILED)))


def test_the_flags_and_the_actions_inputs_reach_the_run_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    outcome, config = cli_run(
        tmp_path, monkeypatch, "--retries", "2", "--baseline-url", "https://prod.example.com/", "--fail-on", "regressions"
    )
    assert outcome.exit_code == 0, outcome.output
    assert (config.retries, config.baseline_url, str(config.fail_on)) == (2, "https://prod.example.com", "regressions")
    outcome, config = cli_run(
        tmp_path, monkeypatch, env={"INPUT_RETRIES": "3", "INPUT_BASELINE-URL": "https://prod.x", "INPUT_FAIL-ON": "regressions"}
    )
    assert (config.retries, config.baseline_url, str(config.fail_on)) == (3, "https://prod.x", "regressions")
    outcome, config = cli_run(tmp_path, monkeypatch, env={"INPUT_RETRIES": "", "INPUT_BASELINE-URL": ""})
    assert (config.retries, config.baseline_url) == (None, None)  # the action's empty inputs


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--retries", "6"], "Invalid value for '--retries': 6 is not in the range 0<=x<=5."),
        (["--retries", "-1"], "Invalid value for '--retries': -1 is not in the range 0<=x<=5."),
        (
            ["--baseline-url", "https://PR-7.example.com"],
            "--baseline-url is the same as --base-url (https://pr-7.example.com); give the deployment to compare with",
        ),
        (["--baseline-url", "prod.example.com"], "--baseline-url must start with http:// or https:// (got 'prod.example.com')."),
        (["--fail-on", "regressions"], "--fail-on regressions needs --baseline-url"),
    ],
)
def test_bad_flags_are_one_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], message: str) -> None:
    outcome, config = cli_run(tmp_path, monkeypatch, *args)
    assert outcome.exit_code == 2 and config is None
    assert message in outcome.output


@pytest.mark.parametrize(
    ("yaml", "message"),
    [
        ("    retries: 6\n", "qa.yml:5: tests[0].retries: input should be less than or equal to 5 (got 6)."),
        ("    retries: -1\n", "qa.yml:5: tests[0].retries: input should be greater than or equal to 0 (got -1)."),
        ("    expect: {timeout: 0}\n", "qa.yml:5: tests[0].expect.timeout: input should be greater than 0 (got 0)."),
        (
            "    timeout: 3\n    expect: {timeout: 4}\n",
            "qa.yml:6: tests[0].expect.timeout: waits 4 s, longer than the test's timeout of 3 s; lower expect.timeout or "
            "raise timeout.",
        ),
    ],
)
def test_bad_manifest_values_name_the_key(yaml: str, message: str) -> None:
    with pytest.raises(ManifestError) as caught:
        manifest.loads(f"version: 1\ntests:\n  - name: a\n    task: t\n{yaml}", "qa.yml")
    assert str(caught.value) == message


def test_expect_timeout_in_defaults_applies_to_tests_with_their_own_checks() -> None:
    m = manifest.loads(
        textwrap.dedent("""\
        version: 1
        defaults: {retries: 2, expect: {timeout: 9, url: /home}}
        tests:
          - {name: a, task: t}
          - {name: b, task: t, expect: {text: Hi}}
          - {name: c, task: t, retries: 0, expect: {text: Hi, timeout: 2}}
        """),
        "qa.yml",
    )
    assert [(t.retries, t.expect.timeout, t.expect.url) for t in m.tests] == [(2, 9, "/home"), (2, 9, None), (0, 2, None)]
    assert manifest.loads("version: 1\ntests:\n  - {name: a, task: t}\n").tests[0].expect.timeout == 5
    short = manifest.loads("version: 1\ntests:\n  - {name: a, task: t, timeout: 2}\n").tests[0]
    assert (short.timeout, short.expect.timeout) == (2, 5)  # the default wait is no error: the test's timeout bounds it


def test_the_tests_own_timeout_bounds_how_long_the_checks_wait() -> None:
    from preview_qa.agent.session import check_wait

    spec = TestSpec(name="t", task="t", timeout=60, expect={"timeout": 8})
    assert check_wait(spec.expect, left_s=50) == 8
    assert check_wait(spec.expect, left_s=13) == 3  # the final screenshot and the description of each check keep 10 s
    assert check_wait(spec.expect, left_s=4) == 0  # no time left: each check looks once


def test_the_baseline_keeps_its_own_traces_and_expect_timeout_does_not_change_a_key(tmp_path: Path) -> None:
    m = manifest.loads("version: 1\ntests:\n  - {name: a, task: t, expect: {text: Hi}}\n")
    cache = RecordingCache(tmp_path, m, "openai", None)
    spec = m.tests[0]
    assert cache.key(spec, "baseline") != cache.key(spec)
    assert cache.key(spec.model_copy(update={"expect": spec.expect.model_copy(update={"timeout": 30})})) == cache.key(spec)
    cache.store(spec, "http://prod", {"history": []}, "baseline")
    assert cache.load(spec) is None and cache.load(spec, "baseline") is not None
