"""How each command ended -> the one exit code its process exits with (`exit_code`, 3 = our own crash, with its
log), said in one line on stderr and, in GitHub Actions, as the step's `exit-code` output."""

from __future__ import annotations

import os
import sys
import tempfile
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import click

from preview_qa import app
from preview_qa.config import FailRules
from preview_qa.errors import PreviewQaError
from preview_qa.lifecycle import ExitCode, exit_with
from preview_qa.results import PlanSummary, RunResult, StopReason, error_line
from preview_qa.secrets.safe_stderr import SafeStderr

CRASH_LOG = "internal-error.log"  # our own crash's traceback, in the results folder (else the temp folder)


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


Ended = RunEnded | PlanEnded | Exception | KeyboardInterrupt | None  # None: a command that runs no tests did its job


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


class Command(click.Command):
    """Every command ends here: how it ended becomes the exit code, and anything but its tests' own outcome one line
    on stderr. A command with a results folder (`out`) also gives GitHub's step its `exit-code` output."""

    def invoke(self, ctx: click.Context) -> NoReturn:
        ended: Ended
        try:
            ended = super().invoke(ctx)
        except (Exception, KeyboardInterrupt) as e:
            ended = e
        code = exit_code(ended)
        out = ctx.params.get("out")
        _say(ended, out)
        if out is not None:
            _step_output(code)
        exit_with(code)


def command(name: str | None = None) -> Callable[[Callable[..., Any]], Command]:
    """A preview-qa command: one that ends through `exit_code`."""
    return click.command(name, cls=Command)


def _say(ended: Ended, out: Path | None) -> None:
    """One line on stderr for an end that is not the tests' own: what the user can fix, or where our crash's log is."""
    if isinstance(ended, RunEnded):
        if ended.result.baseline_error is not None and ended.result.stop_reason is not StopReason.CANCELLED:
            _error(f"{ended.result.baseline_error}; the preview's own results are written.")
    elif isinstance(ended, PreviewQaError | app.ReportersFailed):
        _error(str(ended))
    elif isinstance(ended, Exception):
        click.echo(_internal_error(ended, out), err=True)


def _error(message: str) -> None:
    click.echo(f"preview-qa: error: {message}", err=True)


def _internal_error(error: Exception, out: Path | None) -> str:
    """Our crash's traceback into a log, its secrets redacted as on stderr; one line that says so and points there."""
    trace = "".join(traceback.format_exception(error))
    if isinstance(sys.stderr, SafeStderr):  # the run knew its secrets by then: the log keeps none of them
        trace = sys.stderr.redactor.text(trace)
    log = (out or Path(tempfile.gettempdir())) / CRASH_LOG
    try:
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text(trace, encoding="utf-8")
        where = f"its traceback is in {log}"
    except OSError:
        sys.stderr.write(trace)
        where = "its traceback is above"
    return (
        f"preview-qa: internal error: {type(error).__name__}: {error_line(error)} (a bug in preview-qa, not a verdict "
        f"on your app: {where}; please report it)"
    )


def _step_output(code: ExitCode) -> None:
    """In GitHub Actions, the step's `exit-code` output (action.yml): known only now, after every reporter."""
    from preview_qa.reporters.github.commands import in_github_actions, output_text

    target = os.environ.get("GITHUB_OUTPUT")
    if not in_github_actions(os.environ) or not target:
        return
    try:
        with open(target, "a", encoding="utf-8") as f:
            f.write(output_text({"exit-code": str(int(code))}))
    except OSError as e:
        _error(f"the step's exit-code output could not be written to $GITHUB_OUTPUT: {error_line(e)}")
