"""The files a change touched: read from a list (a file or stdin), or, for a pull request, from git or GitHub's API."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from preview_qa.errors import ChangedFilesError

API_PAGES = 30  # GitHub lists at most 3,000 files of a pull request: 30 pages of 100
_SHA = re.compile(r"[0-9a-f]{40}")


@dataclass(frozen=True)
class ChangedFiles:
    """The changed files and where they came from (`[]`: the list was empty, more likely a broken pipeline than a change
    of nothing); or None, with `why_none` when they were asked for and could not be had."""

    files: list[str] | None
    origin: str = ""
    why_none: str | None = None

    def said(self, listed: str, none: str) -> str | None:
        """What was found, in words, and what the command does about it: `listed` after a list, `none` when there is
        none or it is empty. Fixed text and the user's own file name only: no changed path is echoed."""
        if self.files:
            return f"{len(self.files)} changed file(s) from {self.origin}{listed}."
        if self.files is not None:
            return f"the list of changed files ({self.origin}) is empty{none}."
        return f"--changed-only: {self.why_none}{none}." if self.why_none else None


def changed_files(source: str | None, from_pull_request: bool, environ: Mapping[str, str], stdin: TextIO) -> ChangedFiles:
    """--changed-files FILE (or -) wins; else --changed-only asks the pull request; else none were asked for."""
    if source is not None:
        return ChangedFiles(read_list(source, stdin), "stdin" if source == "-" else source)
    if from_pull_request:
        files, origin = pull_request_files(environ)
        return ChangedFiles(files, origin) if files is not None else ChangedFiles(None, why_none=origin)
    return ChangedFiles(None)


def read_list(source: str, stdin: TextIO) -> list[str]:
    """One repository path a line; blank lines are ignored and a leading ./ is dropped."""
    if source == "-":
        return _paths(stdin.read().splitlines())
    try:
        text = Path(source).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ChangedFilesError(
            f"--changed-files {source}: no such file; give a file with one changed path a line, or - to read them from stdin."
        ) from None
    except (OSError, UnicodeDecodeError) as e:
        raise ChangedFilesError(f"--changed-files {source}: cannot read it ({getattr(e, 'strerror', None) or e}).") from None
    return _paths(text.splitlines())


def _paths(lines: list[str]) -> list[str]:
    stripped = (line.strip() for line in lines)
    return list(dict.fromkeys(line.removeprefix("./") for line in stripped if line))


def pull_request_files(environ: Mapping[str, str]) -> tuple[list[str] | None, str]:
    """(files, where they came from), or (None, why there are none). git when the checkout has both commits
    (no token, no rate limit), else the pull request's files through the API."""
    from preview_qa.reporters.github.api import GitHubApi, GitHubError, read_event  # httpx: only when asked, --help stays quick

    event = read_event(environ.get("GITHUB_EVENT_PATH"))
    if environ.get("GITHUB_ACTIONS") != "true" or event is None:
        return None, "not in a GitHub Actions run (give the files with --changed-files)"
    pull = event.get("pull_request") or {}
    base, head = (pull.get("base") or {}).get("sha"), (pull.get("head") or {}).get("sha")
    diffed = _git_diff(Path(environ.get("GITHUB_WORKSPACE") or "."), base, head)
    if diffed is not None:
        return diffed, "git diff of the pull request"
    api = GitHubApi.from_env(environ)
    if api is None:
        return None, "no GitHub token to list the pull request's files"
    try:
        with api:
            number = api.pull_request_number(event)
            if number is None:
                return None, f"the {environ.get('GITHUB_EVENT_NAME') or 'triggering'} event has no pull request"
            entries = [e for page in api.pages(f"/repos/{api.repository}/pulls/{number}/files", API_PAGES) for e in page]
    except GitHubError as e:
        return None, f"could not list the pull request's files ({e})"
    if len(entries) >= API_PAGES * 100:
        return None, f"the pull request changes {len(entries)} or more files, more than GitHub's API lists"
    # A renamed file changed both places: the old path may be what a test covers.
    names = [name for e in entries for name in (e.get("filename"), e.get("previous_filename")) if isinstance(name, str)]
    return _paths(names), f"the pull request's files (GitHub API, #{number})"


def _git_diff(workspace: Path, base: object, head: object) -> list[str] | None:
    """The files between the merge base and head, when git and both commits are there; None otherwise."""
    git = shutil.which("git")
    if git is None or not (isinstance(base, str) and _SHA.fullmatch(base) and isinstance(head, str) and _SHA.fullmatch(head)):
        return None
    try:
        done = subprocess.run(
            [git, "-C", str(workspace), "diff", "--name-only", "--no-renames", "-z", f"{base}...{head}"],
            capture_output=True,
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:  # a shallow checkout (the default) lacks the base or the merge base
        return None
    return _paths(done.stdout.decode("utf-8", "replace").split("\0"))
