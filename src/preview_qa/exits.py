"""The one ladder of exit codes: how each command ended -> the code its process exits with (`exit_code`, 3 = our own
crash), and what each code tells whoever started the process (`told`: the MCP server reads its children's so)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Literal

from preview_qa import app
from preview_qa.config import FailRules
from preview_qa.errors import PreviewQaError
from preview_qa.lifecycle import ExitCode
from preview_qa.results import ExploreResult, PlanSummary, RunResult, StopReason


@dataclass(frozen=True)
class RunEnded:
    """A run that ended with its results (cancelled or not), and the rule that says whether its tests fail it."""

    result: RunResult
    fails: Callable[[RunResult], bool] = FailRules().fails


@dataclass(frozen=True)
class PlanEnded:
    """`plan` ended with its plan: it fails (1) when nothing could be planned because the preview or the LLM did not
    answer, and succeeds when a route was planned or none needed a draft."""

    summary: PlanSummary


@dataclass(frozen=True)
class ExploreEnded:
    """`explore` ended with its findings: it fails (1) when the PR breaks something (a new finding its repro
    confirmed) or a page could not be compared on both sides, and succeeds when it breaks nothing on any page; with
    --write, it fails too when no draft could be tried (`starter.stopped`: the LLM or the preview did not answer).
    `fails`: the rule on the findings (`demo --explore` has its own)."""

    result: ExploreResult
    starter: PlanSummary | None = None
    fails: Callable[[ExploreResult], bool] = lambda result: result.fails


Ended = (
    RunEnded | PlanEnded | ExploreEnded | Exception | KeyboardInterrupt | None
)  # None: a command that runs no tests did its job


def exit_code(ended: Ended) -> ExitCode:
    """Every way a command can end, as the code its process exits with: the one place that decides it."""
    match ended:
        case None:
            return ExitCode.OK
        case RunEnded(result=result) if result.stop_reason is StopReason.CANCELLED:
            return ExitCode.CANCELLED
        case RunEnded(result=result) if result.baseline_error is not None:  # bad input found late; results written
            return ExitCode.USAGE
        case RunEnded(result=result, fails=fails):
            return ExitCode.FAILED if fails(result) else ExitCode.OK
        case ExploreEnded(result=result, starter=starter, fails=fails):
            return ExitCode.FAILED if fails(result) or (starter is not None and starter.stopped is not None) else ExitCode.OK
        case PlanEnded(summary=summary):
            return ExitCode.FAILED if summary.stopped is not None else ExitCode.OK
        case app.ReportersFailed(result=result):  # an output is missing: no success, whatever the tests did
            return ExitCode.CANCELLED if result.stop_reason is StopReason.CANCELLED else ExitCode.FAILED
        case PreviewQaError():
            return ExitCode.USAGE
        case KeyboardInterrupt():  # Ctrl-C before the run's own event loop took the signals over
            return ExitCode.CANCELLED
        case _:  # our own crash outside any test (inside one, that test errors and the run goes on)
            return ExitCode.INTERNAL_ERROR


class Told(Enum):
    """What a command's exit code tells whoever started it, beyond its number."""

    RESULTS = "its results are written (a run's results.json, whatever its tests did; the plan)"
    STOPPED = "it could not do its job, and its last line on stderr says why (the preview or the LLM did not answer)"
    REFUSED = "input the user can fix, said in its last line on stderr"
    CRASHED = "our own crash: its last line on stderr says where its traceback is"
    CANCELLED = "a signal cancelled it before it wrote anything"


Started = Literal["run", "plan"]  # the commands another process starts and reads the end of (the MCP server's tools)
TOLD: dict[Started, dict[int, Told]] = {
    "run": {  # a run's results are written even when a test failed or a signal cut it short
        ExitCode.OK: Told.RESULTS,
        ExitCode.FAILED: Told.RESULTS,
        ExitCode.CANCELLED: Told.RESULTS,
        ExitCode.USAGE: Told.REFUSED,
        ExitCode.INTERNAL_ERROR: Told.CRASHED,
    },
    "plan": {  # PlanEnded: 1 is a plan that could not be made
        ExitCode.OK: Told.RESULTS,
        ExitCode.FAILED: Told.STOPPED,
        ExitCode.CANCELLED: Told.CANCELLED,
        ExitCode.USAGE: Told.REFUSED,
        ExitCode.INTERNAL_ERROR: Told.CRASHED,
    },
}


def told(command: Started, code: int) -> Told | None:
    """What `command`'s process exiting with `code` says; None for a code preview-qa never exits with (a kill)."""
    return TOLD[command].get(code)
