"""save_state / use_state with a fake agent (no browser): waiting for the setup test at any concurrency, errors naming
it, the state handed from one to the other, cookie values redacted once read, the private store removed even on
cancellation, --only / --shard adding setups, merge keeping each test once, and the manifest's load-time errors."""

from __future__ import annotations

import asyncio
import json
import stat
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from preview_qa.config import RunConfig
from preview_qa.engine import runner as runner_mod
from preview_qa.engine.agent_port import AgentRequest, Recording
from preview_qa.engine.replay_cache import RecordingCache
from preview_qa.engine.saved_state import BrowserState, StateStore
from preview_qa.events import Observed, TestFinished, TestStarted
from preview_qa.manifest.models import Manifest, TestSpec
from preview_qa.manifest.setup_tests import cycle_from, with_setup_tests
from preview_qa.reporters.output import files
from preview_qa.reporters.output.merge import copy_artifacts, merge_runs
from preview_qa.results import Execution, RunResult, Status, StopReason, TestResult
from preview_qa.secrets.redact import Redactor
from preview_qa.selection.shard import in_shard
from preview_qa.verdict.agent_run import AgentRun, DoneReport
from tests.builders import PASS, run, spec
from tests.conftest import clean_env, run_in_process
from tests.repo import ROOT

TOKEN = "tok-4f9a0c1d2e3b"
FAIL = DoneReport(text=json.dumps({"status": "fail", "reason": "wrong password"}), success=True)


def state(token: str = TOKEN) -> BrowserState:
    return BrowserState(
        {
            "cookies": [
                {"name": "sid", "value": token, "domain": "preview.test", "path": "/"},
                {"name": "lang", "value": "en", "domain": "preview.test", "path": "/"},
            ],
            "origins": [{"origin": "http://preview.test", "localStorage": [{"name": "u", "value": "ada"}]}],
        }
    )


def login_and_three(**login: Any) -> list[TestSpec]:
    """The dependents come first in the manifest: only waiting puts them after the login."""
    return [
        spec("a", 1, use_state="user"),
        spec("b", 2, use_state="user"),
        spec("c", 3, use_state="user"),
        spec("login", 4, save_state="user", **login),
    ]


class Agent:
    """Records what each test was given; the login hands over a state unless told otherwise."""

    def __init__(self, login: DoneReport = PASS, keeps: bool = True, delay: float = 0.01):
        self.login, self.keeps, self.delay = login, keeps, delay
        self.started: list[str] = []
        self.finished: list[str] = []
        self.start_states: dict[str, BrowserState | None] = {}

    async def __call__(self, request: AgentRequest) -> AgentRun:
        spec, keep_state = request.spec, request.keep_state
        self.started.append(spec.name)
        self.start_states[spec.name] = request.start_state
        await asyncio.sleep(self.delay)
        if keep_state is not None and self.keeps:
            keep_state(state(f"{TOKEN}-{spec.name}" if spec.use_state else TOKEN))
        request.emit(Observed(name=spec.name, kind="console_error", error=True, detail={"text": f"url ?sid={TOKEN}; lang=en"}))
        self.finished.append(spec.name)
        return AgentRun(done=self.login if spec.save_state else PASS, steps=1, final_url=f"http://preview.test/x?sid={TOKEN}")


@pytest.mark.parametrize("concurrency", [1, 2, 4])
def test_dependents_start_after_the_login_with_its_state_at_any_concurrency(concurrency: int) -> None:
    agent = Agent()
    result, _ = run(login_and_three(), agent, concurrency=concurrency)
    assert [t.status for t in result.tests] == [Status.PASSED] * 4
    assert agent.started[0] == "login" and set(agent.started[1:]) == {"a", "b", "c"}
    assert agent.start_states["login"] is None
    for name in "abc":
        given = agent.start_states[name]
        assert given is not None and given.as_dict() == state().as_dict()


def test_a_chain_of_setups_runs_in_order_each_from_the_state_before() -> None:
    agent = Agent()
    tests = [
        spec("admin page", 1, use_state="admin"),
        spec("make admin", 2, use_state="user", save_state="admin"),
        spec("login", 3, save_state="user"),
    ]
    result, _ = run(tests, agent, concurrency=3)
    assert agent.started == ["login", "make admin", "admin page"]
    assert agent.start_states["admin page"].cookies[0]["value"] == f"{TOKEN}-make admin"  # type: ignore[union-attr]
    assert result.status is Status.PASSED


def test_a_login_that_fails_errors_its_dependents_without_running_them() -> None:
    agent = Agent(login=FAIL)
    result, events = run(login_and_three(), agent, concurrency=2)
    assert agent.started == ["login"]
    login = result.tests[3]
    assert login.status is Status.FAILED
    for t in result.tests[:3]:
        assert (t.status, t.execution, t.usage.llm_calls) == (Status.ERRORED, "none", 0)
        assert t.reason == "setup test 'login' did not pass: agent: wrong password"
    assert not [e for e in events if isinstance(e, TestStarted) and e.name != "login"]


def test_through_a_chain_the_reason_names_each_setup() -> None:
    agent = Agent(login=FAIL)
    tests = [
        spec("login", 1, save_state="user"),
        spec("make admin", 2, use_state="user", save_state="admin"),
        spec("admin page", 3, use_state="admin"),
    ]
    result, _ = run(tests, agent)
    assert result.tests[2].reason == (
        "setup test 'make admin' did not pass: setup test 'login' did not pass: agent: wrong password"
    )


def test_a_skipped_login_errors_its_dependents_and_a_skipped_dependent_is_just_skipped() -> None:
    agent = Agent()
    tests = [
        spec("login", 1, save_state="user", skip="login is broken, see #12"),
        spec("a", 2, use_state="user"),
        spec("b", 3, use_state="user", skip=True),
    ]
    result, _ = run(tests, agent)
    assert agent.started == []
    assert [(t.status, t.reason) for t in result.tests] == [
        (Status.SKIPPED, "login is broken, see #12"),
        (Status.ERRORED, "setup test 'login' did not pass: login is broken, see #12"),
        (Status.SKIPPED, "skipped in the manifest"),
    ]


def test_a_login_that_passes_but_leaves_no_state_is_errored_and_so_are_its_dependents() -> None:
    result, _ = run(login_and_three(), Agent(keeps=False))
    login = result.tests[3]
    assert (login.status, login.reason) == (Status.ERRORED, "the test passed, but its browser state was not saved")
    assert result.tests[0].reason.startswith("setup test 'login' did not pass: the test passed, but its browser state")


def test_a_state_read_during_a_replay_that_fell_back_is_never_saved() -> None:
    """Only the attempt that decided the verdict may hand its state on."""
    started: list[str] = []

    async def agent(request: AgentRequest) -> AgentRun:
        started.append(request.spec.name)
        if request.recording is not None and request.keep_state is not None:  # the replay reads a state, then does not hold
            request.keep_state(state("from-the-replay-1234"))
            return AgentRun(execution=Execution.REPLAYED, replay_error="Could not find matching element")
        return AgentRun(done=PASS)  # the agent's run passes, but its state could not be read

    tests = [spec("login", 1, save_state="user", expect={"url": "/x"}), spec("a", 2, use_state="user")]
    result, _ = run(tests, agent, recordings=lambda s: Recording(origin="http://preview.test", history={}))
    login, dependent = result.tests
    assert (login.execution, login.status) == ("replay-fell-back", Status.ERRORED)
    assert dependent.status is Status.ERRORED and started == ["login", "login"]


def test_cookie_values_are_redacted_from_every_event_once_the_state_is_read() -> None:
    _, events = run(login_and_three(), Agent(), concurrency=1)
    text = json.dumps([getattr(e, "detail", None) for e in events if isinstance(e, Observed)])
    text += json.dumps([e.result.model_dump(mode="json") for e in events if isinstance(e, TestFinished)])
    assert TOKEN not in text
    assert "?sid=<secret>user cookie sid</secret>" in text
    assert "lang=en" in text  # a two-letter value is no secret, and redacting it would garble every report


def test_the_store_is_private_and_named_by_number_not_by_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with StateStore() as store:
        store.save("../../etc/passwd", state())
        (folder,) = tmp_path.glob("preview-qa-state-*")
        (saved,) = folder.iterdir()
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700 and stat.S_IMODE(saved.stat().st_mode) == 0o600
        assert saved.name == "1.json"
        loaded = store.load("../../etc/passwd")
        assert loaded is not None and loaded.as_dict() == state().as_dict()
        store.save("../../etc/passwd", state("a-newer-token-0000"))
        assert [p.name for p in folder.iterdir()] == ["2.json"]
    assert not folder.exists()
    assert TOKEN not in repr(state()) and TOKEN not in str(state()) and repr(state()) == "BrowserState(2 cookies, 1 origins)"


@pytest.mark.parametrize("cancel", [False, True])
def test_the_run_removes_the_saved_states_when_it_ends_or_is_cancelled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cancel: bool
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    seen_during: list[Path] = []

    async def agent(request: AgentRequest) -> AgentRun:
        if request.keep_state is not None:
            request.keep_state(state())
            return AgentRun(done=PASS)
        seen_during.extend(tmp_path.glob("preview-qa-state-*/*.json"))
        await asyncio.sleep(3600 if cancel else 0)
        return AgentRun(done=PASS)

    async def main() -> RunResult:
        cfg = RunConfig(manifest=Path("qa.yml"), base_url="http://preview.test", chromium="/bin/true")
        task = asyncio.ensure_future(
            runner_mod.Runner(Manifest(version=1, tests=login_and_three()), cfg, {}, agent, lambda e: None, Redactor({})).run()
        )
        while not seen_during:
            await asyncio.sleep(0.01)
        if cancel:
            task.cancel()
        return await task

    result = asyncio.run(main())
    assert seen_during  # it was there while the dependents ran
    ended = (StopReason.CANCELLED, "cancelled") if cancel else (StopReason.COMPLETED, None)
    assert (result.stop_reason, result.notice) == ended
    assert not list(tmp_path.iterdir())


def shard_manifest() -> list[TestSpec]:
    return [
        spec("login", 1, save_state="user"),
        spec("admin", 2, use_state="user", save_state="admin"),
        *(spec(f"t{i}", 3 + i, use_state="admin" if i % 3 == 0 else "user") for i in range(9)),
        spec("free", 20),
    ]


def test_with_setup_tests_adds_the_setups_a_selection_needs_in_manifest_order() -> None:
    tests = shard_manifest()
    assert [t.name for t in with_setup_tests(tests, [tests[5]])] == ["login", "admin", "t3"]
    assert [t.name for t in with_setup_tests(tests, [tests[-1]])] == ["free"]
    assert cycle_from(tests, "t3") is None
    looped = [
        spec("x", 1, save_state="a", use_state="b"),
        spec("y", 2, save_state="b", use_state="a"),
        spec("z", 3, use_state="a"),
    ]
    assert cycle_from(looped, "z") == ["x", "y"] and cycle_from(looped, "y") == ["y", "x"]


def test_only_a_dependent_also_runs_its_setups_marked_as_such() -> None:
    agent = Agent()
    result, _ = run(shard_manifest(), agent, only=["t3"])
    assert agent.started == ["login", "admin", "t3"]
    assert [(t.name, t.setup_only) for t in result.tests] == [("login", True), ("admin", True), ("t3", False)]


def test_tags_and_changed_files_still_run_the_login_a_picked_test_needs() -> None:
    tests = [
        spec("login", 1, save_state="user", paths=["src/auth/**"]),
        spec("a", 2, use_state="user", tags=["smoke"], paths=["src/a/**"]),
        spec("b", 3, use_state="user", paths=["src/b/**"]),
    ]
    agent = Agent()
    result, _ = run(tests, agent, tags=["smoke"])
    assert agent.started == ["login", "a"] and [(t.name, t.setup_only) for t in result.tests] == [("login", True), ("a", False)]
    agent = Agent()
    result, _ = run(tests, agent, changed_files=["src/a/page.py"])  # the login's own files did not change
    assert agent.started == ["login", "a"]
    assert [(t.name, t.status) for t in result.tests] == [("login", Status.PASSED), ("a", Status.PASSED), ("b", Status.SKIPPED)]


def test_each_shard_runs_the_setups_its_tests_need_and_the_merge_reports_every_test_once(tmp_path: Path) -> None:
    tests = shard_manifest()
    shards = []
    for index in (1, 2, 3):
        agent = Agent()
        result, _ = run(tests, agent, shard=(index, 3))
        own = set(in_shard([t.name for t in tests], index, 3))
        assert {t.name for t in result.tests if not t.setup_only} == own
        for t in result.tests:
            if t.name.startswith("t"):
                assert "login" in agent.started[: agent.started.index(t.name)]
        assert all(t.status is Status.PASSED for t in result.tests)
        folder = tmp_path / f"shard-{index}"
        for t in result.tests:  # each shard's own copy of a test's evidence
            (folder / files.test_dir(t.name)).mkdir(parents=True)
            (folder / files.test_dir(t.name) / "final.png").write_text(f"shard {index}")
        shards.append((folder, result))
    assert sum(t.name == "login" for _, r in shards for t in r.tests) > 1  # the login ran in more than one shard
    merged = merge_runs([r for _, r in shards])
    assert sorted(t.name for t in merged.tests) == sorted(t.name for t in tests)
    assert not any(t.setup_only for t in merged.tests)
    copy_artifacts(shards, merged, tmp_path / "merged")
    owner = {name: i for i in (1, 2, 3) for name in in_shard([t.name for t in tests], i, 3)}
    for t in tests:
        assert (tmp_path / "merged" / files.test_dir(t.name) / "final.png").read_text() == f"shard {owner[t.name]}"


def test_a_setup_test_whose_own_shard_is_missing_is_reported_by_its_worst_run() -> None:
    def copy(status: Status) -> TestResult:
        return TestResult(name="login", file="qa.yml", line=1, status=status, reason=status.value, setup_only=True)

    runs = [
        RunResult(manifest="qa.yml", base_url="http://p", started_at="2026", tests=[copy(s)])
        for s in (Status.PASSED, Status.FAILED, Status.PASSED)
    ]
    assert [t.status for t in merge_runs(runs).tests] == [Status.FAILED]


def test_a_test_started_signed_in_has_its_own_replay_cache_entry() -> None:
    cache = RecordingCache(Path("cache"), Manifest(version=1, tests=[spec("a", 1)]), "openai", None)
    assert cache.key(spec("a", 1)) != cache.key(spec("a", 1, use_state="user"))
    assert cache.key(spec("a", 1)) == cache.key(spec("a", 1, save_state="user"))  # saving changes nothing it does


MANIFEST_ERRORS = [
    (
        "unknown state",
        "  - {name: login, task: x, save_state: user}\n  - {name: a, task: x, use_state: usr}\n",
        "qa.yml:4: tests[1].use_state: no test saves a state named 'usr'; did you mean 'user'?",
    ),
    (
        "no state saved at all",
        "  - {name: a, task: x, use_state: admin}\n",
        "qa.yml:3: tests[0].use_state: no test saves a state named 'admin'; add 'save_state: admin' to the test that logs in.",
    ),
    (
        "saved twice",
        "  - {name: login, task: x, save_state: user}\n  - {name: again, task: x, save_state: user}\n",
        "qa.yml:4: tests[1].save_state: state 'user' is already saved by test 'login' (line 3); give each save_state its "
        "own name.",
    ),
    (
        "a cycle",
        "  - {name: a, task: x, save_state: one, use_state: two}\n  - {name: b, task: x, save_state: two, use_state: one}\n",
        "qa.yml:3: tests[0].use_state: setup tests wait for each other in a cycle ('a' -> 'b' -> 'a', each waiting for the "
        "test that saves its use_state); break the cycle.",
    ),
    (
        "its own state",
        "  - {name: a, task: x, save_state: one, use_state: one}\n",
        "qa.yml:3: tests[0].use_state: test 'a' starts from state 'one', which it saves itself; remove one of the two keys.",
    ),
    (
        "a bad name",
        "  - {name: a, task: x, save_state: 'a/b'}\n",
        "qa.yml:3: tests[0].save_state: a state name is 1 to 100 letters, digits, spaces, '.', ':', '_' or '-' (got 'a/b').",
    ),
]


@pytest.mark.parametrize(("case", "tests", "message"), MANIFEST_ERRORS, ids=[c[0] for c in MANIFEST_ERRORS])
def test_bad_state_references_are_one_line_errors_with_file_and_line(tmp_path: Path, case: str, tests: str, message: str) -> None:
    (tmp_path / "qa.yml").write_text("version: 1\ntests:\n" + tests, encoding="utf-8")
    proc = run_in_process(["validate", "--offline", "qa.yml"], env=clean_env(), cwd=tmp_path)
    assert (proc.returncode, proc.stderr) == (2, f"preview-qa: error: {message}\n")


def test_a_use_state_from_defaults_names_its_origin_and_the_login_opts_out(tmp_path: Path) -> None:
    (tmp_path / "qa.yml").write_text(
        "version: 1\ndefaults: {use_state: user}\ntests:\n  - {name: login, task: x, save_state: user}\n  - {name: a, task: x}\n"
    )
    proc = run_in_process(["validate", "--offline", "qa.yml"], env=clean_env(), cwd=tmp_path)
    assert proc.returncode == 2 and proc.stderr == (
        "preview-qa: error: qa.yml:4: tests[0].use_state: test 'login' starts from state 'user' (set in defaults), "
        "which it saves itself; set 'use_state: null' on it.\n"
    )
    (tmp_path / "qa.yml").write_text(
        "version: 1\ndefaults: {use_state: user}\ntests:\n"
        "  - {name: login, task: x, save_state: user, use_state: null}\n  - {name: a, task: x}\n"
    )
    proc = run_in_process(["validate", "--offline", "qa.yml"], env=clean_env(), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr


def test_the_session_bench_starts() -> None:
    """bench/ is not run by the tests (it prints figures); this only keeps the script from rotting."""
    bench = ROOT / "bench" / "session.py"
    proc = subprocess.run([sys.executable, str(bench), "--help"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "use_state" in proc.stdout
