"""Saved browser states (a login) for use_state: a credential, so kept only in a private temporary folder for one run.

This is no output of the run: the folder is created 0700 outside the results folder, each state a 0600 file in it,
and it is removed when the run ends, cancelled or not. Nothing here is ever published as an event or written to a
report; a state's repr shows counts, never values."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from types import TracebackType
from typing import Any

MIN_REDACTED_COOKIE = 8  # shorter cookie values ("1", "en-US") are no secret, and replacing them would garble reports


class BrowserState:
    """A browser's storage state in Playwright's format: cookies (HttpOnly ones included), and each origin's
    localStorage and IndexedDB."""

    __slots__ = ("_data",)

    def __init__(self, data: dict[str, Any]):
        self._data = data

    def as_dict(self) -> dict[str, Any]:
        copy: dict[str, Any] = json.loads(json.dumps(self._data))  # a deep copy: the caller may change it
        return copy

    @property
    def cookies(self) -> list[dict[str, Any]]:
        return [c for c in self._data.get("cookies") or [] if isinstance(c, dict)]

    @property
    def origins(self) -> list[dict[str, Any]]:
        return [o for o in self._data.get("origins") or [] if isinstance(o, dict)]

    def secret_values(self, state: str) -> dict[str, str]:
        """Placeholder name -> value for every cookie value worth redacting from the run's output."""
        return {
            f"{state} cookie {c.get('name', '')}": str(c["value"])
            for c in self.cookies
            if len(str(c.get("value") or "")) >= MIN_REDACTED_COOKIE
        }

    def __repr__(self) -> str:
        return f"BrowserState({len(self.cookies)} cookies, {len(self.origins)} origins)"

    __str__ = __repr__


class StateStore:
    """The states saved during one run, by name; `close()` (or leaving the `with` block) deletes them all."""

    def __init__(self) -> None:
        self._folder: Path | None = None
        self._files: dict[str, Path] = {}
        self._saved = 0

    def save(self, name: str, state: BrowserState) -> None:
        if self._folder is None:
            self._folder = Path(tempfile.mkdtemp(prefix="preview-qa-state-"))  # mkdtemp: mode 0700, a fresh name
        self._saved += 1
        path = self._folder / f"{self._saved}.json"  # never the state's name: no user text in a path
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(state.as_dict(), f)
        old, self._files[name] = self._files.get(name), path
        if old is not None:  # a test run again (a replay that fell back) saves its state anew: the last one counts
            old.unlink(missing_ok=True)

    def load(self, name: str) -> BrowserState | None:
        path = self._files.get(name)
        if path is None:
            return None
        return BrowserState(json.loads(path.read_text(encoding="utf-8")))

    def close(self) -> None:
        folder, self._folder, self._files = self._folder, None, {}
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)

    def __enter__(self) -> StateStore:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.close()
