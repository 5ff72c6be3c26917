"""The folder the MCP server started in: every path a tool is given, and every file it reads or writes, resolves
(symlinks included) inside it, else the call is refused with one sentence."""

from __future__ import annotations

import os
from pathlib import Path

from preview_qa.errors import PreviewQaError

RUNS = Path(".preview-qa") / "mcp-runs"  # where each run_tests and plan_tests call writes, one numbered folder each


class ToolRefused(PreviewQaError):
    """A tool call the server will not carry out, in one sentence the coding agent can act on."""


class Folder:
    """The project folder the server serves, resolved once."""

    def __init__(self, root: Path):
        self.root = root.resolve()

    def inside(self, path: str | Path, what: str) -> Path:
        """`path` (relative to the folder, or absolute) resolved with its symlinks; refused unless it lies inside."""
        given = Path(path)
        try:
            full = (given if given.is_absolute() else self.root / given).resolve()
        except (OSError, RuntimeError) as e:  # a symlink loop
            raise ToolRefused(
                f"{what} {str(path)!r} cannot be resolved ({type(e).__name__}); give a path inside {self.root}."
            ) from None
        if not full.is_relative_to(self.root):
            raise ToolRefused(
                f"{what} {str(path)!r} resolves to {full}, outside the folder the server started in ({self.root}); "
                "give a path inside it."
            )
        return full

    def existing_file(self, path: str | Path, what: str) -> Path:
        """A file inside the folder that exists."""
        full = self.inside(path, what)
        if not full.is_file():
            raise ToolRefused(f"{what} {str(path)!r} is not a file in {self.root}; give the path of one, relative to it.")
        return full

    def shown(self, path: Path) -> str:
        """A path inside the folder as the coding agent names it: relative to the folder, with forward slashes."""
        return path.relative_to(self.root).as_posix()

    def new_run(self) -> Path:
        """A new numbered folder under .preview-qa/mcp-runs/ (1, 2, ...), made at once so two calls never share one."""
        runs = self.inside(RUNS, "the runs folder")
        runs.mkdir(parents=True, exist_ok=True)
        runs = self.inside(RUNS, "the runs folder")  # made now: a symlink in its path is seen
        number = max((int(p.name) for p in runs.iterdir() if p.name.isdigit()), default=0)
        while True:
            number += 1
            try:
                os.mkdir(runs / str(number))
            except FileExistsError:
                continue
            return runs / str(number)

    def last_results(self) -> Path:
        """results.json of the latest run_tests call that wrote one."""
        runs = self.inside(RUNS, "the runs folder")
        numbered = sorted((p for p in runs.iterdir() if p.name.isdigit()), key=lambda p: -int(p.name)) if runs.is_dir() else []
        for run in numbered:
            if (run / "results.json").is_file():
                return self.inside(run / "results.json", "the last run's results")
        raise ToolRefused("no run_tests call has written results in this folder yet; call run_tests first, or give `results`.")
