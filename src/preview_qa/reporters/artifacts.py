"""Per-test evidence (screenshots, events.jsonl, history.json) and the run's results.json, written as they arrive."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from preview_qa.events import (
    AgentHistory,
    Event,
    FinalScreenshot,
    Observed,
    RunFinished,
    RunStarted,
    StepRecorded,
    TestFinished,
)
from preview_qa.reporters import Reporter
from preview_qa.reporters.files import RESULTS, test_dir, write_atomic
from preview_qa.results import RunResult, Status, TestResult

SCHEMA_VERSION = 1


class ArtifactsReporter(Reporter):
    """Owns the results folder: every finished test's files are on disk before the next event is handled."""

    def __init__(self, out: Path):
        self.out = out
        self._run: RunResult | None = None
        self._finished: list[TestResult] = []

    def handle(self, event: Event) -> None:
        if isinstance(event, RunStarted):
            self.out.mkdir(parents=True, exist_ok=True)
            self._run = RunResult(manifest=event.manifest, base_url=event.base_url,
                                  started_at=datetime.fromtimestamp(event.at, UTC).isoformat(timespec="seconds"))
            self._write_results(self._run)
        elif isinstance(event, StepRecorded):
            self._step(event)
        elif isinstance(event, Observed):
            self._log(event.name, event.kind, event.error, event.at, event.detail)
        elif isinstance(event, FinalScreenshot):
            write_atomic(self._dir(event.name) / "final.png", event.png)
        elif isinstance(event, AgentHistory):
            write_atomic(self._dir(event.name) / "history.json", json.dumps(event.history, indent=1, default=str,
                                                                             ensure_ascii=False))
        elif isinstance(event, TestFinished):
            event.result.artifacts = self.artifacts_of(event.result.name)
            self._finished.append(event.result)
            if self._run is not None:
                self._write_results(self._run.model_copy(update={"tests": self._finished}))
        elif isinstance(event, RunFinished):
            for test in event.result.tests:
                test.artifacts = self.artifacts_of(test.name)
            self._write_results(event.result)

    def artifacts_of(self, name: str) -> dict[str, str | list[str]]:
        """What exists on disk for the test, as paths relative to the results folder."""
        folder = self._dir(name, create=False)
        rel = test_dir(name)
        found: dict[str, str | list[str]] = {}
        if not folder.is_dir():
            return found
        steps = sorted(p.name for p in folder.glob("step-*.png"))
        if steps:
            found["screenshots"] = [f"{rel}/{s}" for s in steps]
        for key, filename in (("final_screenshot", "final.png"), ("events", "events.jsonl"),
                              ("history", "history.json"), ("animation", "run.gif")):
            if (folder / filename).exists():
                found[key] = f"{rel}/{filename}"
        return found

    def _step(self, event: StepRecorded) -> None:
        if event.screenshot_png:
            write_atomic(self._dir(event.name) / f"step-{event.number:02d}.png", event.screenshot_png)
        self._log(event.name, "step", event.error is not None, event.at,
                  {"number": event.number, "goal": event.goal, "actions": event.actions, "url": event.url,
                   "result_error": event.error})

    def _log(self, name: str, kind: str, error: bool, at: float, detail: dict[str, Any]) -> None:
        line = {"ts": datetime.fromtimestamp(at, UTC).isoformat(timespec="milliseconds"), "type": kind,
                "error": error, **detail}
        with (self._dir(name) / "events.jsonl").open("a", encoding="utf-8") as f:
            f.write(json.dumps(line, ensure_ascii=False, default=str) + "\n")

    def _dir(self, name: str, create: bool = True) -> Path:
        folder = self.out / test_dir(name)
        if create:
            folder.mkdir(parents=True, exist_ok=True)
        return folder

    def _write_results(self, run: RunResult) -> None:
        write_atomic(self.out / RESULTS, json.dumps(results_document(run), indent=2, ensure_ascii=False))


def results_document(run: RunResult) -> dict[str, Any]:
    """results.json: the run's totals, then one entry per test in manifest order."""
    doc = run.model_dump(mode="json", exclude={"tests"})
    return {
        "schema_version": SCHEMA_VERSION,
        **doc,
        "status": run.status.value,
        "totals": {s.value: run.count(s) for s in Status} | {"total": len(run.tests)},
        "usage": run.usage.model_dump(),
        "tests": [t.model_dump(mode="json") for t in run.tests],
    }
