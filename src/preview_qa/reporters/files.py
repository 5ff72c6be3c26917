"""Where each output lives under the results folder, and how files are written so a crash never leaves half a file."""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
import unicodedata
from pathlib import Path

RESULTS = "results.json"
JUNIT = "junit.xml"
REPORT = "report.html"
TESTS = "tests"
SLUG_LIMIT = 60


def workspace_relative(file: str, workspace: Path) -> str:
    """A manifest path as the repository knows it (relative to the workspace), which annotations and JUnit readers need;
    a path outside the workspace stays as it was given."""
    if not file:
        return ""
    try:
        return Path(file).resolve().relative_to(workspace.resolve()).as_posix()
    except ValueError:
        return Path(file).as_posix()


def safe_name(name: str) -> str:
    """A folder name for any test name (unicode, slashes, '..', 500 characters): readable, unique, portable."""
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^A-Za-z0-9]+", "-", ascii_name).strip("-").lower()[:SLUG_LIMIT].strip("-") or "test"
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{slug}-{digest}"


def test_dir(name: str) -> str:
    """The test's artifact folder, relative to the results folder."""
    return f"{TESTS}/{safe_name(name)}"


def step_screenshot(number: int) -> str:
    """The file name of the screenshot taken after agent step `number`."""
    return f"step-{number:02d}.png"


def write_atomic(path: Path, data: bytes | str) -> None:
    """Write to a temporary file beside `path`, then rename it into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        # mkstemp makes the file 0600; a container action running as root would leave it unreadable to upload steps.
        os.fchmod(fd, 0o644)
        with os.fdopen(fd, "wb") as f:
            f.write(payload)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
