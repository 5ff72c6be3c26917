"""Exit codes in one place: every way a command can end goes through `exit_code` (exits.py), each code has a
way to reach it, our own crash is 3 with one line pointing at its log, and in GitHub Actions the step gets the code as
`exit-code`."""

from __future__ import annotations

from pathlib import Path

import pytest

from preview_qa import app
from preview_qa.cli import main
from preview_qa.cli.options import Command
from preview_qa.cli.values import UsageError
from preview_qa.config import FailOn, FailRules
from preview_qa.demo.runner import INTENDED, VACUOUS, off_script
from preview_qa.engine.agent_port import AgentRequest
from preview_qa.errors import ManifestError
from preview_qa.exits import TOLD, Ended, RunEnded, exit_code, told
from preview_qa.lifecycle import ExitCode
from preview_qa.reporters.output import merge as merging
from preview_qa.reporters.output.files import CRASH_LOG
from preview_qa.results import OtherRun, Proof, ProofVerdict, RunResult, Status, StopReason
from preview_qa.verdict.agent_run import AgentRun
from tests.builders import PASS, result, run, run_of, specs_named
from tests.conftest import clean_env, run_in_process
from tests.fakes.github import read_outputs, runner_env

PASSED = run_of(result("a"), result("b", Status.SKIPPED))
FAILED = run_of(result("a"), result("b", Status.FAILED))
UNREACHABLE = run_of(
    result("a", Status.ERRORED, "preview unreachable: refused"),
    stop_reason=StopReason.PREVIEW_UNREACHABLE,
    notice="preview unreachable: refused",
)
CANCELLED = run_of(result("a"), result("b", Status.ERRORED, "cancelled"), stop_reason=StopReason.CANCELLED, notice="cancelled")
BASELINE_DOWN = FAILED.model_copy(update={"baseline_error": "--baseline-url is unreachable: refused"})
PROVEN, EMPTY = (Proof(verdict=v, reason="r") for v in (ProofVerdict.PROVEN, ProofVerdict.VACUOUS))
DEMO_AS_INTENDED = run_of(
    result("Log in works").model_copy(update={"proof": PROVEN}),
    result(VACUOUS).model_copy(update={"proof": EMPTY}),
    *(result(name, status) for name, status in INTENDED.items()),
)


def broken_output(run: RunResult) -> app.ReportersFailed:
    return app.ReportersFailed(run, {"JUnitReporter": "IsADirectoryError: junit.xml"})


WAYS: dict[str, tuple[Ended, ExitCode]] = {
    "validate, init, export or schema did its job": (None, ExitCode.OK),
    "every test passed or was skipped": (RunEnded(PASSED), ExitCode.OK),
    "a test failed": (RunEnded(FAILED), ExitCode.FAILED),
    "a test failed, under --fail-on never": (RunEnded(FAILED, FailOn.NEVER.fails), ExitCode.OK),
    "the preview never answered: every test errored": (RunEnded(UNREACHABLE), ExitCode.FAILED),
    "the preview never answered, under --fail-on never": (RunEnded(UNREACHABLE, FailOn.NEVER.fails), ExitCode.OK),
    "the baseline could not be used": (RunEnded(BASELINE_DOWN, FailOn.NEVER.fails), ExitCode.USAGE),
    "a signal cancelled the run": (RunEnded(CANCELLED, FailOn.NEVER.fails), ExitCode.CANCELLED),
    "a signal cancelled a run whose baseline was down": (
        RunEnded(CANCELLED.model_copy(update={"baseline_error": "down"})),
        ExitCode.CANCELLED,
    ),
    "the demo: every test as intended (one fails on purpose)": (RunEnded(DEMO_AS_INTENDED, off_script), ExitCode.OK),
    "the demo: its vacuous test was proven (--prove)": (
        RunEnded(run_of(*(t.model_copy(update={"proof": PROVEN}) for t in DEMO_AS_INTENDED.tests)), off_script),
        ExitCode.FAILED,
    ),
    "the demo: its failing test passed": (
        RunEnded(run_of(*(result(name) for name in INTENDED)), off_script),
        ExitCode.FAILED,
    ),
    "a reporter broke although every test passed": (broken_output(PASSED), ExitCode.FAILED),
    "a reporter broke in a cancelled run": (broken_output(CANCELLED), ExitCode.CANCELLED),
    "a manifest error": (ManifestError("qa.yml", 3, "tests", "must be a list"), ExitCode.USAGE),
    "a flag's bad value": (UsageError("--shard must look like I/N"), ExitCode.USAGE),
    "Ctrl-C before the run's loop took the signals": (KeyboardInterrupt(), ExitCode.CANCELLED),
    "our own crash outside any test": (RuntimeError("a bug of ours"), ExitCode.INTERNAL_ERROR),
    "our own crash, of any kind": (AttributeError("'NoneType' object has no attribute 'x'"), ExitCode.INTERNAL_ERROR),
}


@pytest.mark.parametrize("way", list(WAYS))
def test_each_way_a_command_ends_has_its_exit_code(way: str) -> None:
    ended, code = WAYS[way]
    assert exit_code(ended) is code


def test_every_command_ends_through_exit_code() -> None:
    """Each command, in its own module under cli/, is made by `command()`: a Command, whose end goes to `exit_code`."""
    assert main.commands and all(isinstance(c, Command) for c in main.commands.values())


def test_every_exit_code_and_every_stop_reason_is_reached() -> None:
    assert {code for _, code in WAYS.values()} == set(ExitCode)
    runs = [ended.result for ended, _ in WAYS.values() if isinstance(ended, RunEnded)]
    assert {run.stop_reason for run in runs} == set(StopReason)


def test_each_code_tells_the_process_that_started_run_or_plan_what_it_means() -> None:
    """The MCP server reads its children's codes here (tests/unit/test_mcp_tools.py); a kill is no code of ours."""
    assert {command: set(codes) for command, codes in TOLD.items()} == {"run": set(ExitCode), "plan": set(ExitCode)}
    assert told("run", -9) is None


@pytest.mark.parametrize(
    ("rule", "fails"),
    [
        (FailOn.FAILED, {"failed", "errored"}),
        (FailOn.ERRORED, {"errored"}),
        (FailOn.REGRESSIONS, {"failed", "errored"}),  # never compared with a baseline: not knowing is no pass
        (FailOn.HEALED, {"failed", "errored", "healed"}),
        # a pass no deterministic page check of its own held for: on an LLM's word, whatever it quoted
        (FailOn.UNCHECKED, {"failed", "errored", "healed", "passed"}),
        (FailOn.NEVER, set()),
    ],
)
def test_each_fail_on_is_its_own_rule(rule: FailOn, fails: set[str]) -> None:
    runs = {
        "passed": PASSED,
        "failed": FAILED,
        "errored": run_of(result("a", Status.ERRORED)),
        "healed": run_of(result("a", healed=True)),
        "checked": run_of(result("a", checked=True), result("b", Status.SKIPPED)),
    }
    assert {name for name, run in runs.items() if rule.fails(run)} == fails


def test_fail_on_is_one_base_and_added_words_so_regressions_with_visual_still_forgives_a_shared_failure() -> None:
    """`regressions,unverified` once failed on any failure (each added word carried `failed` in it): the base says
    which failures fail the run, an added word adds passing tests that fail it too."""
    shared = result("b", Status.FAILED, baseline=OtherRun(status=Status.FAILED, reason="fails on main too"))
    on_its_word = result("c", unverified="the agent quoted nothing")
    rules = FailRules.parse("regressions,unverified")
    assert (rules.base, rules.fails(run_of(result("a"), shared))) == (FailOn.REGRESSIONS, False)
    assert rules.fails(run_of(shared, on_its_word))
    assert FailRules.parse("unverified").base is FailOn.FAILED and FailRules.parse("unverified").fails(run_of(shared))
    assert not FailRules.parse("errored,unverified").fails(run_of(shared))
    for wrong in ("failed,errored", "regressions,failed"):
        with pytest.raises(ValueError, match="cannot be combined: give one of failed, errored, regressions, never"):
            FailRules.parse(wrong)


def test_a_crash_of_ours_inside_a_test_errors_that_test_and_the_run_goes_on() -> None:
    async def agent(request: AgentRequest) -> AgentRun:
        if request.spec.name == "broken":
            raise RuntimeError("a bug of ours in this test")
        return AgentRun(done=PASS)

    ran, _ = run(specs_named("broken", "fine"), agent)
    assert [(t.status, t.reason) for t in ran.tests] == [
        (Status.ERRORED, "internal error: RuntimeError: a bug of ours in this test"),
        (Status.PASSED, "fine"),
    ]
    assert exit_code(RunEnded(ran)) is ExitCode.FAILED  # a test result, as --fail-on says: not 3
    assert exit_code(RunEnded(ran, FailOn.NEVER.fails)) is ExitCode.OK


def test_the_cancelled_marker_is_the_stop_reason_not_the_notices_text() -> None:
    said_cancelled = run_of(result("a"), notice="cancelled")  # a notice is words for people, whatever they say
    assert exit_code(RunEnded(said_cancelled)) is ExitCode.OK
    assert StopReason.merged([StopReason.COMPLETED, StopReason.CANCELLED]) is StopReason.CANCELLED
    shards = [
        run_of(result(name), stop_reason=reason, notice=notice)
        for name, reason, notice in [
            ("a", StopReason.COMPLETED, None),
            ("b", StopReason.PREVIEW_UNREACHABLE, "preview unreachable: refused"),
            ("c", StopReason.CANCELLED, "cancelled"),
        ]
    ]
    merged = merging.merge_runs(shards)
    assert (merged.stop_reason, merged.notice) == (StopReason.CANCELLED, "preview unreachable: refused; cancelled")


def test_a_crash_of_ours_exits_3_with_one_line_pointing_at_its_log_and_the_step_gets_the_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def crash(runs: list[RunResult]) -> RunResult:
        raise RuntimeError("injected into the merge")

    monkeypatch.setattr(merging, "merge_runs", crash)
    shard, out, workspace = tmp_path / "shard", tmp_path / "merged", tmp_path / "workspace"
    shard.mkdir()
    workspace.mkdir()
    (shard / "results.json").write_text(PASSED.model_dump_json(), encoding="utf-8")
    env = clean_env(**runner_env(workspace))
    proc = run_in_process(["merge", str(shard), "--out", str(out)], env=env)
    assert proc.returncode == 3, proc.stderr
    log = out / CRASH_LOG
    assert proc.stderr.splitlines() == [
        "preview-qa: internal error: RuntimeError: injected into the merge (a bug in preview-qa, not a verdict on your "
        f"app: its traceback is in {log}; please report it)"
    ]
    assert "Traceback (most recent call last)" in log.read_text(encoding="utf-8")
    assert "injected into the merge" in log.read_text(encoding="utf-8")
    assert read_outputs(Path(env["GITHUB_OUTPUT"])) == {"exit-code": "3"}


def test_in_github_actions_the_step_gets_a_usage_errors_code_too(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    env = clean_env(**runner_env(workspace))
    proc = run_in_process(["merge", str(workspace), "--out", str(tmp_path / "merged")], env=env)
    assert proc.returncode == 2 and proc.stderr.startswith("preview-qa: error: "), proc.stderr
    assert read_outputs(Path(env["GITHUB_OUTPUT"])) == {"exit-code": "2"}
    assert not (tmp_path / "merged" / CRASH_LOG).exists()
