"""Builders the unit tests share: manifest tests (spec, specs_named), their results (result), a run's result (run_of),
the agent's passing report (PASS), a run of the real runner with a fake agent (run), `run`'s flags as they reach its
RunConfig (cli_run), and a blank screenshot (plain_png)."""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from PIL import Image

from preview_qa import cli
from preview_qa.config import RunConfig
from preview_qa.engine import runner as runner_mod
from preview_qa.engine.agent_port import Recording
from preview_qa.events import Event
from preview_qa.manifest.models import Manifest, TestSpec
from preview_qa.results import RunResult, Status, TestResult
from preview_qa.secrets.redact import Redactor
from preview_qa.verdict.agent_run import AgentRun, DoneReport

PASS = DoneReport(text=json.dumps({"status": "pass", "reason": "fine"}), success=True)
FakeAgent = Callable[..., Awaitable[AgentRun]]


def run(
    tests: list[TestSpec], agent: FakeAgent, recordings: Callable[[TestSpec], Recording | None] | None = None, **config: Any
) -> tuple[RunResult, list[Event]]:
    """The runner over `tests`, each played by `agent` (no browser); the run's result and every event it sent."""
    events: list[Event] = []
    manifest = Manifest(version=1, tests=tests)
    cfg = RunConfig(manifest=Path("qa.yml"), base_url="http://preview.test", chromium="/bin/true", **config)
    result = asyncio.run(runner_mod.Runner(manifest, cfg, {}, agent, events.append, Redactor({}), recordings).run())
    return result, events


def spec(name: str = "t", line: int = 0, **kw: Any) -> TestSpec:
    """A manifest test; its task names it unless `kw` gives one."""
    return TestSpec(**{"name": name, "task": f"task {name}", "line": line, **kw})


def specs_named(*names: str, **kw: Any) -> list[TestSpec]:
    """A manifest's tests, on lines 1, 2, ... in the order named."""
    return [spec(n, i + 1, **kw) for i, n in enumerate(names)]


def result(name: str = "t", status: Status = Status.PASSED, reason: str = "why", **kw: Any) -> TestResult:
    """A test's result, from line 3 of qa.yml, that took 1.25 s."""
    return TestResult(**{"name": name, "file": "qa.yml", "line": 3, "status": status, "reason": reason, "duration_s": 1.25, **kw})


def run_of(*tests: TestResult, **kw: Any) -> RunResult:
    """A run of qa.yml against http://x with these results, that took 9 s."""
    return RunResult(
        **{
            "manifest": "qa.yml",
            "base_url": "http://x",
            "started_at": "2026-01-01T00:00:00+00:00",
            "duration_s": 9,
            "tests": list(tests),
            **kw,
        }
    )


def plain_png(colour: str = "white") -> bytes:
    """A screenshot-sized PNG of a blank page, white unless told."""
    out = io.BytesIO()
    Image.new("RGB", (1280, 800), colour).save(out, "PNG")
    return out.getvalue()


def cli_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *args: str, env: dict[str, str] | None = None) -> Any:
    """`run` of a one-test manifest with `args`: click's outcome, and the RunConfig it would have run (None if refused)."""
    path = tmp_path / "qa.yml"
    path.write_text("version: 1\ntests:\n  - {name: a, task: do it}\n")
    seen: list[RunConfig] = []
    monkeypatch.setattr(cli.run, "execute", lambda spec, config, verbose, plan=None, explore=None: seen.append(config))
    outcome = CliRunner().invoke(cli.main, ["run", str(path), "--base-url", "https://pr-7.example.com/", *args], env=env)
    return outcome, seen[-1] if seen else None
