"""Links to a manifest's lines as GitHub shows them at the pull request's head commit (`.../blob/SHA/qa/qa.yml#L50`)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote

SHA = re.compile(r"[0-9a-f]{40}([0-9a-f]{24})?")  # SHA-1, or SHA-256 for a repository that uses it


def head_sha(env: Mapping[str, str], event: Mapping[str, Any] | None) -> str | None:
    """The commit the pull request's files are at: its head (not GITHUB_SHA, the merge commit a pull_request event
    checks out), else the run's own commit."""
    head = ((event or {}).get("pull_request") or {}).get("head") or {}
    for sha in (head.get("sha"), env.get("GITHUB_SHA")):
        if isinstance(sha, str) and SHA.fullmatch(sha):
            return sha
    return None


def repository_root(file: Path, workspace: Path) -> Path:
    """The checkout the file is in: its nearest folder with a `.git` (actions/checkout's `path:` puts it below the
    workspace), else the workspace."""
    for folder in file.resolve().parents:
        if (folder / ".git").exists():
            return folder
    return workspace.resolve()


class SourceLinks:
    """A manifest line's URL on GitHub, for files inside the checkout; none outside it or without the run's commit."""

    def __init__(self, env: Mapping[str, str], event: Mapping[str, Any] | None, workspace: Path):
        server, self.repository = env.get("GITHUB_SERVER_URL"), env.get("GITHUB_REPOSITORY")
        self.server = server.rstrip("/") if server else None
        self.sha, self.workspace = head_sha(env, event), workspace

    def __call__(self, file: str, line: int) -> str | None:
        if not (self.server and self.repository and self.sha and file):
            return None
        path = Path(file)
        try:
            relative = path.resolve().relative_to(repository_root(path, self.workspace)).as_posix()
        except ValueError:
            return None
        return f"{self.server}/{quote(self.repository)}/blob/{self.sha}/{quote(relative)}#L{line}"
