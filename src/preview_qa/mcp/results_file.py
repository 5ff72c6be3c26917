"""A run's results.json as the tools read it back (inside the project folder): the compact summary run_tests answers,
and one test's evidence for test_evidence: reason, causes, the failed step, steps in words, the final screenshot."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from preview_qa.mcp.folder import Folder, ToolRefused
from preview_qa.mcp.models import Evidence, FailedCheck, FailedStep, ProofLine, RunSummary, StepInWords, TestLine
from preview_qa.reporters.output.card import failure_card
from preview_qa.reporters.output.files import RESULTS
from preview_qa.results import StopReason, TestResult, Usage

FAILED_STEP = ("failed", "errored")


class ResultsFile:
    """One results.json inside the project folder, read once."""

    def __init__(self, folder: Folder, given: str | Path | None):
        path = folder.last_results() if given is None else folder.inside(given, "results")
        if path.is_dir():
            path = folder.inside(path / RESULTS, "results")
        self.folder, self.path, self.shown = folder, path, folder.shown(path)
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise ToolRefused(f"cannot read {self.shown} ({type(e).__name__}); give a results.json `run` wrote.") from None
        if not isinstance(doc, dict) or not isinstance(doc.get("tests"), list):
            raise ToolRefused(f"{self.shown} is not a results.json preview-qa wrote (it has no list of tests).")
        self.doc: dict[str, Any] = doc
        self.raw: list[dict[str, Any]] = [t for t in doc["tests"] if isinstance(t, dict)]

    def summary(self) -> RunSummary:
        """The run in a few lines a coding agent reads: totals, usage, and each test's status and reason."""
        try:
            return RunSummary(
                results=self.shown,
                status=self.doc.get("status") or "passed",
                stop_reason=self.doc.get("stop_reason") or StopReason.COMPLETED,
                totals={k: v for k, v in (self.doc.get("totals") or {}).items() if isinstance(v, int)},
                usage=Usage.model_validate(self.doc.get("usage") or {}),
                notice=self.doc.get("notice"),
                tests=[self._line(raw) for raw in self.raw],
            )
        except ValidationError as e:
            raise ToolRefused(f"{self.shown} does not read as preview-qa's results ({_first(e)}).") from None

    def evidence(self, name: str) -> tuple[Evidence, bytes | None]:
        """One test's evidence, and its final screenshot's PNG (None when the test has none)."""
        raw = self._raw(name)
        test = self._test(raw)
        card = failure_card(test, str(self.doc.get("base_url") or ""))
        shot = test.artifacts.get("final_screenshot")
        png = self._file(shot).read_bytes() if isinstance(shot, str) and self._file(shot).is_file() else None
        evidence = Evidence(
            results=self.shown,
            name=test.name,
            status=test.status,
            reason=test.reason,
            causes=test.causes,
            failed_step=failed_step(raw),
            failed_checks=[
                FailedCheck(check=e.check, expected=e.expected, found=e.found, waited=f"{e.waited_s:.1f} s" if e.waited_s else "")
                for e in test.expectations
                if not e.ok
            ],
            agent_report=json.dumps(test.agent_report, ensure_ascii=False) if test.agent_report else None,
            quotes=[q if isinstance(q, str) else json.dumps(q, ensure_ascii=False) for q in raw.get("quotes") or []],
            steps=[
                StepInWords(
                    number=s.number, did=s.did, page=s.page or None, error=s.error, not_run=s.not_run, went_wrong=s.went_wrong
                )
                for s in card.steps
            ],
            folder=self.folder.shown(self._file(card.folder)),
            screenshot=self.folder.shown(self._file(shot)) if png is not None and isinstance(shot, str) else None,
        )
        return evidence, png

    def _line(self, raw: dict[str, Any]) -> TestLine:
        test = self._test(raw)
        proof = ProofLine(verdict=test.proof.verdict, reason=test.proof.reason) if test.proof else None
        return TestLine(name=test.name, status=test.status, reason=test.reason, failed_step=failed_step(raw), proof=proof)

    def _raw(self, name: str) -> dict[str, Any]:
        found = next((t for t in self.raw if t.get("name") == name), None)
        if found is None:
            names = ", ".join(repr(t.get("name")) for t in self.raw) or "none"
            raise ToolRefused(f"{self.shown} has no test named {name!r}; its tests are {names}.")
        return found

    def _test(self, raw: dict[str, Any]) -> TestResult:
        try:
            return TestResult.model_validate(raw)
        except ValidationError as e:
            raise ToolRefused(f"{self.shown} does not read as preview-qa's results ({_first(e)}).") from None

    def _file(self, relative: str) -> Path:
        """A file the results name, relative to their folder: inside the project folder, whatever the results say."""
        return self.folder.inside(self.path.parent / relative, "a file the results name")


def failed_step(raw: dict[str, Any]) -> FailedStep | None:
    """The test step that failed or errored (results.json's `step_results`, #47), when the results have steps."""
    steps = [s for s in raw.get("step_results") or [] if isinstance(s, dict)]
    failed = next((s for s in steps if s.get("status") in FAILED_STEP), None)
    if failed is None:
        return None
    return FailedStep(
        number=int(failed.get("index") or steps.index(failed) + 1),
        of=len(steps),
        name=str(failed.get("name") or ""),
        status=failed["status"],
        reason=str(failed.get("reason") or ""),
    )


def _first(error: ValidationError) -> str:
    first = error.errors()[0]
    return f"{'.'.join(str(p) for p in first['loc'])}: {first['msg']}"
