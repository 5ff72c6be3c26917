"""What a GitHub Actions runner makes of a step (workflow commands, $GITHUB_OUTPUT), the action's step run as the runner
runs it (run_step), what GitHub shows of a job summary or comment, and a fake of the REST API's PR comments and PR files."""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cmarkgfm
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

REPO = "acme/shop"
PR = 7
TOKEN = "ghs_fakeTokenForTests0123456789"


@dataclass
class Command:
    name: str
    properties: dict[str, str]
    message: str


@dataclass
class StepLog:
    """The step's output as the runner treats it: the commands it obeyed, and the lines it only displays."""

    commands: list[Command] = field(default_factory=list)
    displayed: list[str] = field(default_factory=list)
    order: list[str] = field(default_factory=list)  # "mask", "command" or "text", one per line

    def named(self, name: str) -> list[Command]:
        return [c for c in self.commands if c.name == name]


def _unescape(text: str, properties: bool = False) -> str:
    pairs = [("%0D", "\r"), ("%0A", "\n")] + ([("%3A", ":"), ("%2C", ",")] if properties else []) + [("%25", "%")]
    for escaped, plain in pairs:
        text = text.replace(escaped, plain)
    return text


def read_log(text: str) -> StepLog:
    """Like the runner: a line is a command when it starts with `::` after leading whitespace, or holds a legacy `##[`;
    between `::stop-commands::TOKEN` and `::TOKEN::` no line is."""
    log, stop_token = StepLog(), None
    for line in text.splitlines():
        if stop_token is not None:
            if line.strip() == f"::{stop_token}::":
                stop_token = None
            log.displayed.append(line)
            log.order.append("text")
            continue
        candidate = line.lstrip()
        match = re.match(r"::([\w-]+)(?: ([^:]*))?::(.*)$", candidate) if candidate.startswith("::") else None
        if match is None and "##[" not in line:
            log.displayed.append(line)
            log.order.append("text")
            continue
        if match is None:  # the legacy form counts as a command too: we must never print one by accident
            log.commands.append(Command("legacy", {}, line))
            log.order.append("command")
            continue
        props = dict(p.split("=", 1) for p in (match.group(2) or "").split(",") if "=" in p)
        command = Command(match.group(1), {k: _unescape(v, True) for k, v in props.items()}, _unescape(match.group(3)))
        log.commands.append(command)
        log.order.append("mask" if command.name == "add-mask" else "command")
        if command.name == "stop-commands":
            stop_token = command.message
    return log


def read_outputs(path: Path) -> dict[str, str]:
    """$GITHUB_OUTPUT as the runner reads it: `name=value` lines and `name<<DELIMITER` blocks."""
    lines, values = path.read_text(encoding="utf-8").split("\n"), {}
    i = 0
    while i < len(lines):
        line = lines[i]
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            end = lines.index(delimiter, i + 1)
            values[name] = "\n".join(lines[i + 1 : end])
            i = end + 1
            continue
        if "=" in line:
            name, value = line.split("=", 1)
            values[name] = value
        i += 1
    return values


@dataclass
class Step:
    """One action step as the runner saw it."""

    exit_code: int
    output: str  # stdout and stderr, interleaved as they came
    log: StepLog
    outputs: dict[str, str]
    summary: str
    results: dict[str, Any]


def run_step(env: dict[str, str], workspace: Path) -> Step:
    """`preview-qa run -v` as the action's step runs it, in `workspace` with the runner's `env`; what the runner saw."""
    for name in ("GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY"):  # a fresh file per step, as the runner gives
        Path(env[name]).write_text("", encoding="utf-8")
    # -v: browser-use's own log, with the agent's raw output (newlines kept), on stderr; the runner reads both
    # streams line by line through one command parser, so they are read here as one.
    proc = subprocess.run(
        [sys.executable, "-m", "preview_qa", "run", "-v"],
        env=env,
        cwd=workspace,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        timeout=300,
    )
    results = json.loads((workspace / "results" / "results.json").read_text(encoding="utf-8"))
    return Step(
        proc.returncode,
        proc.stdout,
        read_log(proc.stdout),
        read_outputs(Path(env["GITHUB_OUTPUT"])),
        Path(env["GITHUB_STEP_SUMMARY"]).read_text(encoding="utf-8"),
        results,
    )


def rendered(markdown: str, raw_html: bool = False) -> str:
    """The HTML GitHub makes of a job summary or comment: cmark-gfm, GitHub's own renderer, with its extensions.
    `raw_html` keeps our own raw HTML (<details>, <summary>, <br>), as GitHub's sanitizer does, instead of dropping it."""
    options = cmarkgfm.cmark.Options.CMARK_OPT_UNSAFE if raw_html else 0
    return cmarkgfm.github_flavored_markdown_to_html(markdown, options=options)


def visible(page: str) -> str:
    """The text a reader sees of that HTML."""
    return html.unescape(re.sub(r"<[^>]+>", "", page))


class FakeGitHub:
    """Issue comments and changed files of one pull request; `deny` answers every call with that status, as a read-only
    token gets."""

    def __init__(
        self,
        server: HTTPServer,
        deny: int | None = None,
        commit_pulls: list[dict[str, Any]] | None = None,
        pull_files: list[dict[str, Any]] | None = None,
    ):
        self.server, self.deny = server, deny
        self.comments: list[dict[str, Any]] = []
        self.calls: list[tuple[str, str]] = []
        self.commit_pulls = commit_pulls or []
        self.pull_files = pull_files or []  # as the API lists them: {"filename": ..., "status": ...}
        server.expect_request(f"/repos/{REPO}/pulls/{PR}/files", method="GET").respond_with_handler(
            lambda request: self._json(request, self._page(request, self.pull_files))
        )
        server.expect_request(re.compile(rf"/repos/{REPO}/issues/{PR}/comments"), method="GET").respond_with_handler(self._list)
        server.expect_request(f"/repos/{REPO}/issues/{PR}/comments", method="POST").respond_with_handler(self._create)
        server.expect_request(re.compile(rf"/repos/{REPO}/issues/comments/\d+"), method="PATCH").respond_with_handler(
            self._update
        )
        server.expect_request(re.compile(rf"/repos/{REPO}/commits/[0-9a-f]+/pulls"), method="GET").respond_with_handler(
            lambda request: self._json(request, self.commit_pulls)
        )

    @property
    def url(self) -> str:
        return self.server.url_for("").rstrip("/")

    def add_comment(self, body: str) -> None:
        self.comments.append({"id": 1000 + len(self.comments), "body": body, "user": {"login": "someone"}})

    def _json(self, request: Request, payload: Any, status: int = 200) -> Response:
        self.calls.append((request.method, request.path))
        if request.headers.get("Authorization") != f"Bearer {TOKEN}":
            return Response(json.dumps({"message": "Bad credentials"}), 401, content_type="application/json")
        if self.deny is not None:
            return Response(
                json.dumps({"message": "Resource not accessible by integration"}), self.deny, content_type="application/json"
            )
        return Response(json.dumps(payload), status, content_type="application/json")

    @staticmethod
    def _page(request: Request, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        page, per_page = int(request.args.get("page", 1)), int(request.args.get("per_page", 30))
        return items[(page - 1) * per_page : page * per_page]

    def _list(self, request: Request) -> Response:
        return self._json(request, self._page(request, self.comments))

    def _create(self, request: Request) -> Response:
        if self.deny is None:
            self.add_comment(request.get_json()["body"])
            self.comments[-1]["user"] = {"login": "github-actions[bot]"}
        return self._json(request, self.comments[-1] if self.comments else {}, 201)

    def _update(self, request: Request) -> Response:
        comment = next(c for c in self.comments if c["id"] == int(request.path.rsplit("/", 1)[1]))
        if self.deny is None:
            comment["body"] = request.get_json()["body"]
        return self._json(request, comment)


def runner_env(workspace: Path, api_url: str = "http://127.0.0.1:9", event: dict[str, Any] | None = None) -> dict[str, str]:
    """The variables a runner gives a step on a pull_request event (files created empty, as the runner does)."""
    temp = workspace.parent / "runner-temp"
    temp.mkdir(exist_ok=True)
    files = {name: temp / f"{name.lower()}.txt" for name in ("GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY")}
    for path in files.values():
        path.touch()
    event_path = temp / "event.json"
    event_path.write_text(json.dumps(event if event is not None else {"number": PR, "pull_request": {"number": PR}}))
    return {
        "GITHUB_ACTIONS": "true",
        "CI": "true",
        "GITHUB_WORKSPACE": str(workspace),
        "RUNNER_TEMP": str(temp),
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(event_path),
        "GITHUB_REPOSITORY": REPO,
        "GITHUB_API_URL": api_url,
        "GITHUB_SERVER_URL": "https://github.com",
        "GITHUB_RUN_ID": "4242",
        "INPUT_GITHUB-TOKEN": TOKEN,
        **{k: str(v) for k, v in files.items()},
    }
