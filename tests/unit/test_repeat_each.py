"""--repeat-each and --last-failed with a fake agent (no browser): each test runs N times from scratch, its pass rate
is reported, and one that passed on some runs only is flaky (`--fail-on flaky` fails the run on it); --last-failed
runs only the tests an earlier results.json says failed or errored."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from preview_qa.config import FailOn, FailRules
from preview_qa.engine.agent_port import AgentRequest
from preview_qa.events import AttemptFinished, Event, Observed
from preview_qa.results import Status
from preview_qa.verdict.agent_run import AgentRun, DoneReport
from tests.builders import PASS, cli_run, run, specs_named

FAIL = DoneReport(text=json.dumps({"status": "fail", "reason": "broken"}), success=True)


def playing(pattern: str) -> tuple[object, list[AgentRequest]]:
    """An agent passing (P) or failing (F) each call in turn, as `pattern` says."""
    calls: list[AgentRequest] = []

    async def agent(request: AgentRequest) -> AgentRun:
        calls.append(request)
        request.emit(Observed(name=request.spec.name, kind="console_error", error=True, detail={}))
        return AgentRun(done=PASS if pattern[len(calls) - 1] == "P" else FAIL)

    return agent, calls


def labels(events: list[Event]) -> list[str | None]:
    return [e.label for e in events if isinstance(e, AttemptFinished)]


def test_a_test_failing_one_run_in_three_is_flaky_with_its_pass_rate() -> None:
    agent, calls = playing("PPFPP")
    outcome, events = run(specs_named("t", retries=2), agent, repeat_each=5)
    [t] = outcome.tests
    assert len(calls) == 5 and labels(events) == [f"attempt-{n}" for n in range(1, 6)]  # a failed run is not retried
    assert (t.status, t.flaky, t.passes, t.attempts, t.pass_rate) == (Status.PASSED, True, 4, 5, 0.8)
    assert "flaky: passed 4 of 5 runs (80%)" in t.marks
    assert [(a.attempt, a.status) for a in t.earlier_attempts] == [(1, "passed"), (2, "passed"), (3, "failed"), (4, "passed")]
    assert json.loads(outcome.model_dump_json())["tests"][0]["pass_rate"] == 0.8
    assert outcome.flaky == [t] and FailRules.parse("failed,flaky").fails(outcome) and not FailRules().fails(outcome)
    assert FailOn.FLAKY.fails(outcome)


@pytest.mark.parametrize(
    ("pattern", "status", "shown", "mark"),
    [
        ("PPP", Status.PASSED, 3, "passed 3 of 3 runs (100%)"),
        ("FFF", Status.FAILED, 3, "passed 0 of 3 runs (0%)"),
        ("PFF", Status.PASSED, 1, "flaky: passed 1 of 3 runs (33%)"),  # its result is the run that passed
    ],
)
def test_the_result_is_the_last_pass_else_the_last_run(pattern: str, status: Status, shown: int, mark: str) -> None:
    agent, _ = playing(pattern)
    [t] = run(specs_named("t"), agent, repeat_each=3)[0].tests
    assert (t.status, t.shown_attempt, t.flaky) == (status, shown, mark.startswith("flaky"))
    assert mark in t.marks and not FailOn.FLAKY.fails(run(specs_named("t"), playing("PPP")[0], repeat_each=3)[0])


def _results(folder: Path, **statuses: str) -> Path:
    tests = [{"name": name, "status": status} for name, status in statuses.items()]
    (folder / "results.json").write_text(json.dumps({"tests": tests}), encoding="utf-8")
    return folder


def test_last_failed_runs_only_the_failed_and_errored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "earlier").mkdir()
    folder = _results(tmp_path / "earlier", a="errored")
    outcome, config = cli_run(tmp_path, monkeypatch, "--last-failed", "--results", str(folder))
    assert outcome.exit_code == 0, outcome.output
    assert config.only == ["a"]


@pytest.mark.parametrize(
    ("statuses", "said"),
    [
        (None, "could not be read"),
        ({"a": "passed"}, "no test failed or errored in"),
        ({"a": "failed", "gone": "failed"}, "names no test of the manifest called 'gone'"),
    ],
)
def test_last_failed_refuses_what_it_cannot_rerun(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, statuses: dict[str, str] | None, said: str
) -> None:
    (tmp_path / "earlier").mkdir()
    if statuses is not None:
        _results(tmp_path / "earlier", **statuses)
    outcome, config = cli_run(tmp_path, monkeypatch, "--last-failed", "--results", str(tmp_path / "earlier"))
    assert outcome.exit_code == 2 and said in outcome.output and config is None


def test_results_without_last_failed_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    outcome, config = cli_run(tmp_path, monkeypatch, "--results", str(tmp_path))
    assert outcome.exit_code == 2 and "give --last-failed too" in outcome.output and config is None
