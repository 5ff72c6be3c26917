"""stderr as safe as stdout: every line redacted and unable to issue a workflow command, and inside GitHub's
`::stop-commands::` region the process's stderr joined to stdout, so that the runner reads both in order."""

from __future__ import annotations

import atexit
import contextlib
import io
import os
import sys
import unicodedata
from collections.abc import Callable
from typing import TextIO

from preview_qa.secrets.redact import Redactor

BREAK = "\u200b"  # zero-width space: not whitespace to the runner, so a line it leads is no command


def inert(line: str) -> str:
    """`line` as the runner only displays it: a `::` it would read as a command after leading whitespace (or any
    invisible character) gets a zero-width space before it, and so does the `[` of every legacy `##[` command."""
    lead = 0
    while lead < len(line) and (line[lead].isspace() or unicodedata.category(line[lead]) in ("Cc", "Cf", "Zs")):
        lead += 1
    if line.startswith("::", lead):
        line = line[:lead] + BREAK + line[lead:]
    return line.replace("##[", f"##{BREAK}[")


class SafeStderr(io.TextIOBase):
    """Wraps the process's stderr: whole lines only, each redacted, then made inert. Everything Python writes there
    goes through it (logging, warnings, tracebacks, click), so no page or LLM text reaches stderr as a command."""

    def __init__(self, inner: TextIO, redactor: Redactor):
        self.inner, self.redactor = inner, redactor
        self._pending = ""

    def write(self, text: str) -> int:
        self._pending += text
        if "\n" in self._pending:
            # one write's lines together: a secret that spans lines (a PEM key in a log message) is still whole
            lines, _, self._pending = self._pending.rpartition("\n")
            self.inner.write(self._clean(lines) + "\n")
            self.inner.flush()
        return len(text)

    def flush(self) -> None:
        self.inner.flush()

    def close_line(self) -> None:
        """Write what is left of an unfinished line (at exit), with a line break."""
        if self._pending:
            pending, self._pending = self._pending, ""
            with contextlib.suppress(ValueError, OSError):  # the stream may be closed by then
                self.write(pending + "\n")

    def _clean(self, lines: str) -> str:
        return "\n".join(inert(line) for line in self.redactor.text(lines).split("\n"))

    def fileno(self) -> int:
        return self.inner.fileno()

    def isatty(self) -> bool:
        return self.inner.isatty()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.inner, "encoding", "utf-8")


def install_safe_stderr(redactor: Redactor) -> SafeStderr:
    """Route sys.stderr through a SafeStderr for the rest of the process (once; a second call updates its secrets)."""
    if isinstance(sys.stderr, SafeStderr):
        sys.stderr.redactor = redactor
        return sys.stderr
    safe = SafeStderr(sys.stderr, redactor)
    sys.stderr = safe
    atexit.register(safe.close_line)
    return safe


def join_stderr_to_stdout() -> Callable[[], None] | None:
    """Point the process's file descriptor 2 at stdout (children such as the Playwright driver write there directly),
    so the runner reads one ordered stream; returns how to undo it. None when the streams are not the process's own."""
    try:
        if sys.stdout.fileno() != 1 or sys.stderr.fileno() != 2:
            return None
    except (AttributeError, OSError, ValueError):  # a test harness's in-memory streams
        return None
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(2)
    os.dup2(1, 2)

    def restore() -> None:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)

    return restore
