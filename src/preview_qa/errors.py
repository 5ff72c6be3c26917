"""Every error a user can fix, under one base class: the CLI says it in one line and exits 2 (exits.py, in one place)."""

from __future__ import annotations

import re

_LINE_BREAKS = re.compile("[\x00-\x1f\x7f\x85\u2028\u2029]")


class PreviewQaError(Exception):
    """Input the user can fix: a manifest, a provider's set-up, a results folder to merge, the run's options."""


class ManifestError(PreviewQaError):
    """A problem at a place in a YAML file: one sentence, with the line and the key it concerns."""

    def __init__(self, file: str, line: int | None, key: str | None, message: str):
        super().__init__(message)
        self.file, self.line, self.key, self.message = file, line, key, message

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        text = f"{where}: {self.key}: {self.message}" if self.key else f"{where}: {self.message}"
        return _LINE_BREAKS.sub(lambda m: repr(m.group())[1:-1], text)  # one line, whatever a key holds


MAX_PROBLEMS = 20  # a manifest's problems listed at once: enough for a first draft, not a wall of text


class ManifestProblems(ManifestError):
    """Several problems of one manifest, each a ManifestError of its own, in the order of their lines; as a
    ManifestError it is the first of them. Only `of` makes one."""

    def __init__(self, problems: list[ManifestError]):
        first = problems[0]
        super().__init__(first.file, first.line, first.key, first.message)
        self.problems = problems

    @staticmethod
    def of(problems: list[ManifestError]) -> ManifestError:
        """One problem as itself; several, by line, as one error that lists them (at most MAX_PROBLEMS)."""
        ordered = sorted(problems, key=lambda p: p.line or 0)
        return ordered[0] if len(ordered) == 1 else ManifestProblems(ordered)

    def __str__(self) -> str:
        shown = self.problems[:MAX_PROBLEMS]
        more = len(self.problems) - len(shown)
        lines = [f"{len(self.problems)} problems in {self.file}:", *(f"  {p}" for p in shown)]
        return "\n".join(lines + ([f"  ... and {more} more (fix these first)"] if more else []))


class LLMConfigError(PreviewQaError):
    """The provider cannot be set up as configured (unknown provider, missing key)."""


class SetupError(PreviewQaError):
    """The run cannot start as configured; the message says what to fix."""


class SelectionError(PreviewQaError):
    """A filter names what the manifest does not have, or leaves nothing to run; nothing has run."""


class ChangedFilesError(PreviewQaError):
    """The list of changed files cannot be read; nothing has run."""


class MergeError(PreviewQaError):
    """A folder cannot be merged; the message says which and why."""


class UnpricedBudgetError(PreviewQaError):
    """A cost budget on a model whose price nobody knows: it could not be enforced, so the run is refused."""


class ExportError(PreviewQaError):
    """No passing recording of the test to export; the message says where it was looked for."""


class AgentFilesError(PreviewQaError):
    """`init --agents` cannot merge its entry into a coding agent's file as it is; nothing was written."""
