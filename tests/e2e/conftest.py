"""Fixtures of the e2e tests: a temp folder to watch the process table by, and the demo run once per session."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import CliRun, clean_env, run_in_process
from tests.e2e.processes import short_tmp
from tests.fakes.github import runner_env


@pytest.fixture
def browser_tmp() -> Iterator[Path]:
    """A short_tmp for the test's CLI run."""
    with short_tmp() as path:
        yield path


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> CliRun:
    """`preview-qa demo` inside a (fake) GitHub Actions step, once for every test that reads what it wrote: its
    results folder (the export's input) and the PR comment's body, comment.md (the failure card)."""
    workspace = tmp_path_factory.mktemp("ws")
    out = workspace / "out"
    proc = run_in_process(["demo", "--out", str(out)], env=clean_env(**runner_env(workspace)), cwd=workspace)
    return CliRun(proc.returncode, proc.stdout, proc.stderr, out, None)
