"""Inside a GitHub Actions run: masked secrets, inert echoed text, annotations, job summary, outputs, the PR comment."""

from __future__ import annotations

import html
import os
import re
import secrets
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from preview_qa.events import Event, RunFinished
from preview_qa.reporters import Reporter
from preview_qa.reporters.github.api import GitHubApi, GitHubError, read_event
from preview_qa.reporters.junit import clean, details
from preview_qa.reporters.output.files import (
    DRIFT_LIVE,
    DRIFT_RECORDED,
    JUNIT,
    RESULTS,
    test_dir,
    workspace_relative,
    write_atomic,
)
from preview_qa.reporters.output.steps import read_events, step_lines, steps_of
from preview_qa.results import RunResult, Status, TestResult, clip, one_line
from preview_qa.secrets.redact import forms
from preview_qa.secrets.safe_stderr import join_stderr_to_stdout

ERRORS_PER_STEP = 10  # the runner shows at most 10 error annotations per step (and 50 per job)
ANNOTATION_LIMIT = 4096  # the runner cuts an annotation's message there, silently; ours end with a visible "…"
SUMMARY_LIMIT = 1024 * 1024 - 64 * 1024  # the runner rejects a step summary over 1 MiB; keep room for notices
COMMENT_LIMIT = 60_000  # GitHub refuses comment bodies over 65,536 characters
CELL_LIMIT = 300
DETAIL_LIMIT = 4_000
COMMENT_FILE = "comment.md"  # the PR comment's body, for the two-workflow (workflow_run) pattern
EMOJI = {Status.PASSED: "✅", Status.FAILED: "❌", Status.ERRORED: "⚠️", Status.SKIPPED: "⏭️"}
# `:` too, which breaks every GFM autolink with a scheme (http://, mailto:, xmpp:); `www.` gets the same escape below.
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]~|!:])")
_WWW = re.compile(r"(www)\.", re.IGNORECASE)


def in_github_actions(env: Mapping[str, str]) -> bool:
    return env.get("GITHUB_ACTIONS") == "true"


def escape_data(text: str) -> str:
    """A workflow command's message: the runner unescapes %25, %0D and %0A, so nothing can end the line early."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A workflow command's property value: additionally `:` and `,`, which would end the value."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(name: str, message: str = "", **properties: str | int | None) -> str:
    """A workflow command; empty properties (None, "", 0) are left out, as @actions/core leaves them out."""
    props = ",".join(f"{key}={escape_property(str(value))}" for key, value in properties.items() if value)
    return f"::{name}{' ' + props if props else ''}::{escape_data(message)}"


def annotation(level: str, message: str, **properties: str | int | None) -> str:
    """An error/warning/notice: control characters cleaned, the message clipped where the runner would cut it."""
    cleaned = {key: clean(value) if isinstance(value, str) else value for key, value in properties.items()}
    return command(level, clip(clean(message), ANNOTATION_LIMIT), **cleaned)



def md_cell(text: str, limit: int = CELL_LIMIT) -> str:
    """Untrusted text as inert Markdown on one line: no HTML, no links (autolinks included) or emphasis, no @mentions
    (nor e-mail autolinks), no table breaks, no control characters."""
    text = _MARKDOWN_SPECIAL.sub(r"\\\1", html.escape(one_line(clean(text), limit), quote=False))
    return _WWW.sub(r"\1\\.", text).replace("@", "@\u200b")


def html_text(text: str, limit: int = 200) -> str:
    """Untrusted text inside an HTML element (a raw HTML block: never autolinked), where Markdown escapes would show:
    entities only, no @mentions, no control characters."""
    return html.escape(one_line(clean(text), limit)).replace("@", "@\u200b")


def code_block(text: str) -> str:
    """Untrusted multi-line text in a fence longer than any backtick run inside it, so it cannot close the fence."""
    text = clip(clean(text), DETAIL_LIMIT)
    fence = "`" * max(3, max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    return f"{fence}text\n{text}\n{fence}"


class GitHubReporter(Reporter):
    """Started before the run prints anything and finished after it; `handle` only keeps the run's result."""

    def __init__(self, env: Mapping[str, str], out: Path, comment: bool = True, stream: TextIO | None = None,
                 secret_values: Iterable[str | None] = ()):
        self.env, self.out, self.comment, self.stream = env, out, comment, stream
        self.secret_values = list(secret_values)
        self.workspace = Path(env.get("GITHUB_WORKSPACE") or os.getcwd())
        self._token = secrets.token_hex(16)
        self._stopped = False
        self._restore_stderr: Callable[[], None] | None = None
        self._result: RunResult | None = None

    def _print(self, line: str) -> None:
        stream = self.stream or sys.stdout
        stream.write(line + "\n")
        stream.flush()

    def start(self) -> None:
        """Mask every secret in each of its forms (each line of a multi-line one too), then make the run's own output
        unable to issue commands: stdout inside `::stop-commands::`, and stderr joined to it meanwhile (the runner
        reads the two pipes unordered, so a stderr line could otherwise be read before the stop)."""
        for value in dict.fromkeys(v for v in self.secret_values if v):
            for part in dict.fromkeys(p for form in forms(value) for p in [form, *form.splitlines()]):
                if part.strip():
                    self._print(command("add-mask", part))
        sys.stdout.flush()
        sys.stderr.flush()
        self._print(f"::stop-commands::{self._token}")
        self._stopped = True
        if self.stream is None:
            self._restore_stderr = join_stderr_to_stdout()

    def handle(self, event: Event) -> None:
        if isinstance(event, RunFinished):
            self._result = event.result

    def finish(self) -> None:
        """Resume commands, then annotate, write the outputs and the summary, and post the PR comment."""
        if self._stopped:
            if self._restore_stderr is not None:
                self._restore_stderr()
                self._restore_stderr = None
            sys.stdout.flush()
            sys.stderr.flush()
            self._print(f"::{self._token}::")
            self._stopped = False
        run = self._result
        if run is None:
            return
        for line in error_annotations(run, self.relative):
            self._print(line)
        self._append("GITHUB_OUTPUT", outputs(run, self.out))
        steps = {t.name: step_lines(steps_of(read_events(self.out, t))) for t in run.tests if not t.status.is_green}
        self._append("GITHUB_STEP_SUMMARY", render_markdown(run, self.relative, self._run_url(), SUMMARY_LIMIT, steps))
        manifest = self.relative(run.manifest)
        marker = f"<!-- preview-qa: {html.escape(manifest)} -->"
        body = marker + "\n" + render_markdown(run, self.relative, self._run_url(), COMMENT_LIMIT, steps)
        write_atomic(self.out / COMMENT_FILE, body)  # also for a later workflow_run to post
        if self.comment:
            self._comment(marker, body)

    def relative(self, file: str) -> str:
        return workspace_relative(file, self.workspace)

    def _run_url(self) -> str | None:
        server, repo, run_id = (self.env.get(k) for k in ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_RUN_ID"))
        return f"{server}/{repo}/actions/runs/{run_id}" if server and repo and run_id else None

    def _append(self, variable: str, text: str) -> None:
        target = self.env.get(variable)
        if not target:
            return
        try:
            with open(target, "a", encoding="utf-8") as f:
                f.write(text)
        except OSError as e:
            self._print(annotation("warning", f"preview-qa could not write ${variable}: {e}", title="preview-qa"))

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
        notice = (f"preview-qa could not post its pull request comment ({why}). On pull requests from forks the token "
                  "is read-only: the results are in this job summary; to comment anyway, use the two-workflow "
                  "`workflow_run` pattern in preview-qa's README.")
        self._print(annotation("warning", notice, title="preview-qa: no PR comment"))
        self._append("GITHUB_STEP_SUMMARY", f"\n> [!NOTE]\n> {md_cell(notice, 1000)}\n")


class PullRequestComments(GitHubApi):
    """One sticky comment per manifest on a pull request, through the REST API."""

    def upsert(self, number: int, marker: str, body: str) -> None:
        existing = self._find(number, marker)
        if existing is None:
            self.call("POST", f"/repos/{self.repository}/issues/{number}/comments", json={"body": body})
        else:
            self.call("PATCH", f"/repos/{self.repository}/issues/comments/{existing}", json={"body": body})

    def _find(self, number: int, marker: str) -> int | None:
        # 30 pages: 3,000 comments; a PR with more is not worth more requests
        for comments in self.pages(f"/repos/{self.repository}/issues/{number}/comments", limit=30):
            found: int | None = next((c["id"] for c in comments if marker in (c.get("body") or "")), None)
            if found is not None:
                return found
        return None


def error_annotations(run: RunResult, relative: Any) -> list[str]:
    """One error per failed/errored test (manifest order), a run-level one instead of N identical ones, within limits."""
    failing = [t for t in run.tests if not t.status.is_green]
    shared = [t for t in failing if run.notice and t.reason == run.notice]
    lines = []
    if shared and run.notice:
        lines.append(annotation("error", f"{len(shared)} test(s) did not run: {run.notice}",
                                file=relative(run.manifest), title=f"preview-qa: {run.notice.split(':')[0]}"))
    for test in failing:
        if test not in shared:
            lines.append(annotation("error", test.reason, file=relative(test.file), line=test.line, title=test.name))
    if len(lines) > ERRORS_PER_STEP:
        more = len(lines) - ERRORS_PER_STEP
        lines = lines[:ERRORS_PER_STEP]
        lines.append(annotation("warning", f"{more} more failed or errored test(s) are listed in the job summary.",
                                file=relative(run.manifest), title="preview-qa: more failures"))
    return lines


def outputs(run: RunResult, out: Path) -> str:
    """$GITHUB_OUTPUT in the delimiter form, which no value can break out of."""
    values = {s.value: str(run.count(s)) for s in (Status.PASSED, Status.FAILED, Status.ERRORED, Status.SKIPPED)}
    values |= {"total": str(len(run.tests)), "flaky": str(len(run.flaky)), "regressions": str(len(run.regressions)),
               "results-path": str(out / RESULTS), "junit-path": str(out / JUNIT)}
    text = ""
    for name, value in values.items():
        delimiter = f"ghadelimiter_{secrets.token_hex(16)}"
        text += f"{name}<<{delimiter}\n{value}\n{delimiter}\n"
    return text


def render_markdown(run: RunResult, relative: Any, run_url: str | None, limit: int,
                    steps: Mapping[str, Sequence[str]] | None = None) -> str:
    """The table of tests and the failures' details (with each failure's steps, if given), cut (with a note) before
    `limit` UTF-8 bytes."""
    counts = " · ".join(f"{run.count(s)} {s.value}" for s in Status if run.count(s)) or "no tests"
    head = [f"### {EMOJI[run.status]} preview-qa: {run.status.value}",
            f"**{counts}** of {len(run.tests)} test(s) from {md_cell(relative(run.manifest))} against "
            f"{md_cell(run.base_url)} in {run.duration_s:.1f} s", ""]
    for notice in (run.notice, run.baseline_error):
        if notice:
            head += ["> [!WARNING]", f"> {md_cell(notice, 1000)}", ""]
    head += ["| | Test | Reason | Duration | Steps |", "|:-:|---|---|--:|--:|"]
    rows = [f"| {EMOJI[t.status]} | {md_cell(t.name, 120)}{_marks(t)} | {md_cell(t.reason)} | {t.duration_s:.1f} s "
            f"| {t.steps} |" for t in run.tests]
    failures = [_detail(t, relative, (steps or {}).get(t.name, ())) for t in run.tests if not t.status.is_green]
    drifts = [f"- {md_cell(t.name, 120)}: {md_cell(t.replay_drift)} (the recorded and the live page: "
              f"{md_cell(f'{test_dir(t.name)}/{DRIFT_RECORDED}, {DRIFT_LIVE}')})\n" for t in run.tests if t.replay_drift]
    evidence = ("Screenshots, event logs and results.json: "
                + (f"[the run's artifacts]({run_url}#artifacts)." if run_url else "the results folder."))
    items = [(row + "\n", "row") for row in rows]
    items += [(block, "heading") for block in [_groups(run)] if block]
    items += [("\n#### Failures\n", "heading")] if failures else []
    items += [(block, "failure") for block in failures]
    items += [("\n#### Replays that drifted (the agent took over)\n", "heading")] if drifts else []
    items += [(line, "drift") for line in drifts]
    text = "\n".join(head) + "\n"
    budget = limit - 600 - len(evidence.encode())  # the cut note and the evidence line always fit
    size = len(text.encode())
    for index, (part, _kind) in enumerate(items):
        size += len(part.encode())
        if size > budget:
            rest = [kind for _, kind in items[index:]]
            drifts_left = f" and {rest.count('drift')} more replay drift(s)" if rest.count("drift") else ""
            text += (f"\n_Cut here to stay within GitHub's size limit: {rest.count('row')} more test row(s) and "
                     f"{rest.count('failure')} more failure detail(s){drifts_left} are in results.json._\n")
            break
        text += part
    return text + f"\n{evidence}\n"


def _marks(test: TestResult) -> str:
    return "".join(f" · _{md_cell(m, 100)}_" for m in test.marks)


def _groups(run: RunResult) -> str:
    """Whether a red test is this pull request's fault: regressions, failing on the baseline too, and flaky tests."""
    groups = [("🔴 Regressions (they pass on the baseline)", run.regressions),
              ("🟠 Failing on the baseline too", [t for t in run.tests if t.fails_on_baseline_too]),
              ("🟡 Flaky (passed after a retry)", run.flaky)]
    if run.baseline_url:
        groups.insert(2, ("⚪ Not confirmed on the baseline (it errored there, or did not run)",
                          [t for t in run.tests if not t.status.is_green and not t.regression
                           and not t.fails_on_baseline_too]))
    elif not run.flaky:
        return ""
    text = "\n#### Compared with the baseline\n" if run.baseline_url else "\n#### Flaky tests\n"
    if run.baseline_url:
        text += f"Failed and errored tests ran once more on {md_cell(run.baseline_url)}.\n"
    for title, tests in groups:
        if tests:
            names = ", ".join(md_cell(t.name, 120) for t in tests)
            text += f"\n**{title}: {len(tests)}**: {names}\n"
    return text


def _detail(test: TestResult, relative: Any, steps: Sequence[str]) -> str:
    """One failure: collapsed, its summary line in HTML (Markdown is not rendered there), the story and the steps (each
    action naming its element) in a code block."""
    where = html_text(f"{relative(test.file)}:{test.line}")
    final = f"Final URL: {md_cell(test.final_url)}\n" if test.final_url else ""
    story = details(test) + ("\n\nSteps:\n" + "\n".join(steps) if steps else "")
    return (f"\n<details><summary>{EMOJI[test.status]} <b>{html_text(test.name)}</b> ({where})</summary>\n\n"
            f"{final}\n{code_block(story)}\n\n</details>\n")
