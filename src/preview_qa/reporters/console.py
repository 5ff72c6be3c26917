"""Progress and the final table, for a person at a terminal (or reading a CI log)."""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from preview_qa.events import (
    AttemptFinished,
    Event,
    ExploreFinished,
    RunFinished,
    RunStarted,
    RunTarget,
    RunWarning,
    TestFinished,
    TestStarted,
)
from preview_qa.reporters import Reporter
from preview_qa.reporters.output.files import EXPLORE, FINDINGS
from preview_qa.reporters.output.proofs import flagged_tests, proof_counts
from preview_qa.results import Execution, RunResult, Status, TestResult

STYLE = {Status.PASSED: "green", Status.FAILED: "red", Status.ERRORED: "magenta", Status.SKIPPED: "yellow"}
CI_LOG_WIDTH = 140
MARK = {Status.PASSED: "✓", Status.FAILED: "✗", Status.ERRORED: "!", Status.SKIPPED: "-"}


class ConsoleReporter(Reporter):
    def __init__(self, stream: TextIO | None = None, out_dir: str | None = None, width: int | None = None):
        self.console = Console(file=stream, width=width, highlight=False, soft_wrap=False)
        if width is None and not self.console.is_terminal:
            self.console.width = CI_LOG_WIDTH  # CI logs are wide; rich would assume 80 columns
        self.out_dir = out_dir

    def handle(self, event: Event) -> None:
        if isinstance(event, RunStarted):
            self.console.print(f"preview-qa: {len(event.test_names)} test(s) against {escape(event.base_url)}")
        elif isinstance(event, RunWarning):
            self.console.print(f"warning: {escape(event.message)}", style="yellow")
        elif isinstance(event, TestStarted):
            self.console.print(f"  … {escape(event.name)}", style="dim")
        elif isinstance(event, AttemptFinished):
            self._other_run(event)
        elif isinstance(event, TestFinished):
            r = event.result
            how = f", {r.how_run}" if r.how_run else ""  # "replayed (0 LLM calls)": the cache decided how it ran
            self.console.print(
                f"  {MARK[r.status]} [{STYLE[r.status]}]{r.status.value}[/]{_marks(r)} {escape(r.name)} "
                f"({r.duration_s:.1f}s{how}): {escape(r.reason)}"
            )
            if r.replay_drift:
                self.console.print(f"      {escape(r.replay_drift)}", style="yellow")
            if r.healed_line:  # the recorded step above, against what replaced it
                self.console.print(f"      healed: instead, {escape(r.healed_line)}", style="yellow")
        elif isinstance(event, RunFinished):
            self._summary(event.result)
        elif isinstance(event, ExploreFinished):  # `run --explore`, after the tests' summary
            from preview_qa.reporters.explore import told

            for line in told(event.explore, Path(self.out_dir or ".") / EXPLORE / FINDINGS):
                self.console.print(escape(line))

    def _proofs(self, run: RunResult) -> None:
        """With --prove: the proofs' counts, and each vacuous or weak test with the mutation it survived."""
        counts = proof_counts(run)
        if counts:
            self.console.print(f"proofs: {counts}")
        for t in flagged_tests(run):
            self.console.print(f"  {t.verdict.value}: {escape(t.name)}: {escape(t.reason)}. {escape(t.advice)}", style="yellow")

    def _other_run(self, event: AttemptFinished) -> None:
        """A failed attempt (another follows, or the test's line says it was the last) and every baseline run."""
        r = event.result
        if event.label != RunTarget.BASELINE and r.status.is_green:
            return
        where = "on the baseline" if event.label == RunTarget.BASELINE else event.label
        self.console.print(
            f"    {MARK[r.status]} {escape(r.name)} {where}: [{STYLE[r.status]}]{r.status.value}[/] "
            f"({r.duration_s:.1f}s): {escape(r.reason)}",
            style="dim",
        )

    def _summary(self, run: RunResult) -> None:
        table = Table(title="preview-qa results", show_lines=False, expand=False)
        for column in ("Test", "Status", "Reason", "Duration", "Steps", "Tokens", "Path"):
            table.add_column(column, overflow="fold")
        for t in run.tests:
            table.add_row(
                escape(t.name),
                f"[{STYLE[t.status]}]{t.status.value}[/]{_marks(t)}",
                escape(t.reason),
                f"{t.duration_s:.1f}s",
                str(t.steps),
                str(t.usage.total_tokens or ""),
                "" if t.execution is Execution.NOT_RUN else t.execution.value,
            )
        self.console.print(table)
        counts = ", ".join(f"{run.count(s)} {s.value}" for s in Status if run.count(s))
        counts += "".join(
            f", {len(tests)} {what}"
            for what, tests in (
                ("flaky", run.flaky),
                ("healed", run.healed),
                ("fell back (not healed)", run.fell_back),
                ("regression(s)", run.regressions),
                ("changed (expect.visual)", run.changed),
                ("on the agent's word (unverified)", run.unverified),
            )
            if tests
        )
        usage = run.usage
        cost = f", ${usage.cost_usd:.4f}" if usage.cost_usd else ""
        self.console.print(
            f"[bold]{run.status.value.upper()}[/]: {counts or 'no tests'} in {run.duration_s:.1f}s "
            f"({usage.llm_calls} LLM calls, {usage.total_tokens} tokens{cost})",
            style=STYLE[run.status],
        )
        self._proofs(run)
        for t in run.changed:
            self.console.print(f"changed: {escape(t.name)}: {escape(t.changed or '')}", style="yellow", soft_wrap=True)
        if run.notice:
            self.console.print(f"note: {escape(run.notice)}")
        if run.baseline_error:
            self.console.print(f"baseline: {escape(run.baseline_error)}", style=STYLE[Status.ERRORED])
        if self.out_dir:
            self.console.print(f"results: {escape(self.out_dir)}")


def _marks(test: TestResult) -> str:
    return "".join(f" ({escape(m)})" for m in test.marks)
