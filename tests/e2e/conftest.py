"""Fixtures of the e2e tests that watch the process table."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture
def browser_tmp() -> Iterator[Path]:
    """A TMPDIR for one CLI run, so that every browser profile it makes is found under it; short enough for
    Chromium, which puts a Unix socket below TMPDIR (at most 107 bytes: pytest's tmp_path is too long)."""
    path = Path(tempfile.mkdtemp(prefix="pq-", dir="/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)
