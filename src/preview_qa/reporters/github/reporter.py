"""Inside a GitHub Actions run: masked secrets, inert echoed text, annotations, job summary, outputs, the PR comment."""

from __future__ import annotations

import contextlib
import html
import os
import secrets
import sys
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TextIO

from preview_qa.events import Event, ExploreFinished, PlanFinished, RunFinished
from preview_qa.reporters import Reporter
from preview_qa.reporters.github.api import GitHubError, read_event
from preview_qa.reporters.github.commands import annotation, command, error_annotations, in_github_actions, outputs
from preview_qa.reporters.github.comments import PullRequestComments
from preview_qa.reporters.github.explore_section import explore_markdown
from preview_qa.reporters.github.markdown import md_cell, render_markdown
from preview_qa.reporters.github.source import SourceLinks
from preview_qa.reporters.github.visual import changed_markdown
from preview_qa.reporters.output.files import EXPLORE, FINDINGS, with_artifacts, workspace_relative, write_atomic
from preview_qa.results import RunResult
from preview_qa.secrets.redact import Redactor, forms
from preview_qa.secrets.safe_stderr import join_stderr_to_stdout

SUMMARY_LIMIT = 1024 * 1024 - 64 * 1024  # the runner rejects a step summary over 1 MiB; keep room for notices
COMMENT_LIMIT = 60_000  # GitHub refuses comment bodies over 65,536 characters
EXPLORE_SHARE = 3  # `run --explore`'s findings take at most a third of the summary's and the comment's size
COMMENT_FILE = "comment.md"  # the PR comment's body, for the two-workflow (workflow_run) pattern


class StoppedCommands:
    """The process's output unable to issue workflow commands between `stop()` and `resume()`: stdout inside
    `::stop-commands::` with a token of its own, and (`joins_stderr`) stderr joined to it meanwhile (the runner reads
    the two pipes unordered, so a stderr line could otherwise be read before the stop)."""

    def __init__(self, say: Callable[[str], None], joins_stderr: bool = True) -> None:
        self.say, self.joins_stderr = say, joins_stderr
        self._token = secrets.token_hex(16)
        self._stopped = False
        self._restore_stderr: Callable[[], None] | None = None

    def stop(self) -> None:
        sys.stdout.flush()
        sys.stderr.flush()
        self.say(f"::stop-commands::{self._token}")
        self._stopped = True
        if self.joins_stderr:
            self._restore_stderr = join_stderr_to_stdout()

    def __enter__(self) -> StoppedCommands:
        self.stop()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.resume()

    def resume(self) -> None:
        if not self._stopped:
            return
        if self._restore_stderr is not None:
            self._restore_stderr()
            self._restore_stderr = None
        sys.stdout.flush()
        sys.stderr.flush()
        self.say(f"::{self._token}::")
        self._stopped = False


def commands_stopped(env: Mapping[str, str]) -> AbstractContextManager[object]:
    """In GitHub Actions, a block whose output issues no workflow command (`explore`'s own runs print page text);
    elsewhere nothing."""
    return StoppedCommands(lambda line: print(line, flush=True)) if in_github_actions(env) else contextlib.nullcontext()


class GitHubReporter(Reporter):
    """Started before the run prints anything and finished after it; `handle` only keeps the run's result."""

    def __init__(
        self,
        env: Mapping[str, str],
        out: Path,
        redactor: Redactor,
        comment: bool = True,
        stream: TextIO | None = None,
    ):
        self.env, self.out, self.comment, self.stream = env, out, comment, stream
        self.redactor = redactor  # the run's, gathered by app.py: what is masked before anything is printed
        self.workspace = Path(env.get("GITHUB_WORKSPACE") or os.getcwd())
        self._commands = StoppedCommands(self._print, joins_stderr=stream is None)
        self._result: RunResult | None = None

    def _print(self, line: str) -> None:
        stream = self.stream or sys.stdout
        stream.write(line + "\n")
        stream.flush()

    def start(self) -> None:
        """Mask every secret in each of its forms (each line of a multi-line one too), then make the run's own output
        unable to issue commands: stdout inside `::stop-commands::`, and stderr joined to it meanwhile (the runner
        reads the two pipes unordered, so a stderr line could otherwise be read before the stop)."""
        for value in self.redactor.given:
            for part in dict.fromkeys(p for form in forms(value) for p in [form, *form.splitlines()]):
                if part.strip():
                    self._print(command("add-mask", part))
        self._commands.stop()

    def handle(self, event: Event) -> None:
        if isinstance(event, RunFinished):
            self._result = event.result
        elif isinstance(event, PlanFinished) and self._result is not None:  # `run --plan`, after the tests
            self._result = self._result.model_copy(update={"plan": event.plan})
        elif isinstance(event, ExploreFinished) and self._result is not None:  # `run --explore`, after the tests
            self._result = self._result.model_copy(update={"explore": event.explore})

    def finish(self) -> None:
        """Resume commands, then annotate, write the outputs and the summary, and post the PR comment."""
        self._commands.resume()
        run = self._result
        if run is None:
            return
        for warning in run.warnings:
            self._print(annotation("warning", warning, title="preview-qa"))
        for line in error_annotations(run, self.relative):
            self._print(line)
        self._append("GITHUB_OUTPUT", outputs(run, self.out))
        run = with_artifacts(self.out, run)  # each test's files and steps in words, for its failure card
        # expect.visual's section and `run --explore`'s, after the rest (and in its limit)
        visual = changed_markdown(run, self._run_url())
        links = SourceLinks(self.env, read_event(self.env.get("GITHUB_EVENT_PATH")), self.workspace)
        after = visual + self._explored(run, SUMMARY_LIMIT // EXPLORE_SHARE)
        self._append(
            "GITHUB_STEP_SUMMARY",
            render_markdown(run, self.relative, self._run_url(), SUMMARY_LIMIT - len(after.encode()), links) + after,
        )
        manifest = self.relative(run.manifest)
        marker = f"<!-- preview-qa: {html.escape(manifest)} -->"
        after = visual + self._explored(run, COMMENT_LIMIT // EXPLORE_SHARE)
        comment = render_markdown(run, self.relative, self._run_url(), COMMENT_LIMIT - len(after.encode()), links)
        body = marker + "\n" + comment + after
        write_atomic(self.out / COMMENT_FILE, body)  # also for a later workflow_run to post
        if self.comment:
            self._comment(marker, body)

    def _explored(self, run: RunResult, limit: int) -> str:
        """`run --explore`'s findings, cut to `limit` with a note naming the whole findings.md; empty without it."""
        if run.explore is None:
            return ""
        full = self.relative(str(self.out / EXPLORE / FINDINGS))
        return "\n" + explore_markdown(run.explore, limit, "####", full)

    def relative(self, file: str) -> str:
        return workspace_relative(file, self.workspace)

    def _run_url(self) -> str | None:
        server, repo, run_id = (self.env.get(k) for k in ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_RUN_ID"))
        return f"{server}/{repo}/actions/runs/{run_id}" if server and repo and run_id else None

    def _append(self, variable: str, text: str) -> None:
        failed = append_to(self.env, variable, text)
        if failed:
            self._print(annotation("warning", failed, title="preview-qa"))

    def _comment(self, marker: str, body: str) -> None:
        event = read_event(self.env.get("GITHUB_EVENT_PATH"))
        api = PullRequestComments.from_env(self.env)
        if api is None or not event:
            return
        try:
            with api:
                number = api.pull_request_number(event)
                if number is not None:
                    api.upsert(number, marker, body)
        except GitHubError as e:
            self._degraded(str(e))

    def _degraded(self, why: str) -> None:
        notice = (
            f"preview-qa could not post its pull request comment ({why}). On pull requests from forks the token "
            "is read-only: the results are in this job summary; to comment anyway, use the two-workflow "
            "`workflow_run` pattern in preview-qa's README."
        )
        self._print(annotation("warning", notice, title="preview-qa: no PR comment"))
        self._append("GITHUB_STEP_SUMMARY", f"\n> [!NOTE]\n> {md_cell(notice, 1000)}\n")


def append_to(env: Mapping[str, str], variable: str, text: str) -> str | None:
    """`text` appended to the file a GitHub variable names ($GITHUB_STEP_SUMMARY, $GITHUB_OUTPUT), if it names one;
    why it could not be, or None."""
    target = env.get(variable)
    if not target:
        return None
    try:
        with open(target, "a", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        return f"preview-qa could not write ${variable}: {e}"
    return None
