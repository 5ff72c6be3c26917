"""Each tool's arguments and its structured result: pydantic models, whose JSON Schemas are the tools' input and
output schemas. A field marked Untrusted holds text the preview or the test's LLM wrote, fenced (mcp/fence.py)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from preview_qa.mcp.fence import Untrusted, UntrustedList, UntrustedOrNone
from preview_qa.results import ProofVerdict, Status, StopReason, Usage


def _manifest() -> Any:
    return Field(default="qa.yml", description="The test manifest, relative to the project folder.")


def _base_url() -> Any:
    return Field(description="The preview deployment to test, e.g. http://localhost:3000 or https://pr-42.preview.example.com.")


class Arguments(BaseModel):
    """A tool's arguments: unknown ones are refused, not ignored."""

    model_config = ConfigDict(extra="forbid")


class ListTestsArgs(Arguments):
    manifest: str = _manifest()


class RunTestsArgs(Arguments):
    manifest: str = _manifest()
    base_url: str = _base_url()
    names: list[str] | None = Field(default=None, description="Run only these tests, by name (default: every test).")
    tags: list[str] | None = Field(default=None, description="Run only the tests with any of these tags.")
    prove: bool = Field(
        default=False, description="Replay each passing test against mutations of the preview: proven, weak or vacuous?"
    )


class TestEvidenceArgs(Arguments):
    name: str = Field(description="The test's name.")
    results: str | None = Field(
        default=None, description="A results.json (or its folder) in the project folder; default: the last run_tests call's."
    )


class PlanTestsArgs(Arguments):
    manifest: str = _manifest()
    base_url: str = _base_url()
    changed_files: list[str] | None = Field(
        default=None, description="The files the change touched, relative to the project folder: their routes are planned for."
    )
    routes: list[str] | None = Field(default=None, description="Routes to plan for, e.g. /settings.")


class ExportTestArgs(Arguments):
    manifest: str = _manifest()
    name: str = Field(description="The test to export: one that passed after an agent run.")
    results: str | None = Field(
        default=None, description="A results.json (or its folder) the test passed in; default: the last run_tests call's."
    )
    language: Literal["python", "ts"] = Field(default="python", description="python: pytest-playwright; ts: @playwright/test.")


class ListedTest(BaseModel):
    name: str
    line: int = Field(description="Where the test starts in the manifest.")
    tags: list[str]
    start: str
    task: str | None = None
    steps: list[dict[str, Any]] | None = Field(default=None, description="The test's steps, for a test written as steps.")
    skip: str | None = Field(default=None, description="Why the manifest skips it.")


class TestList(BaseModel):
    manifest: str
    tests: list[ListedTest]


class FailedStep(BaseModel):
    number: int = Field(description="The test step that failed, from 1.")
    of: int
    name: str
    status: Literal["failed", "errored"]
    reason: Untrusted


class ProofLine(BaseModel):
    verdict: ProofVerdict
    reason: Untrusted


class TestLine(BaseModel):
    name: str
    status: Status
    reason: Untrusted
    failed_step: FailedStep | None = None
    proof: ProofLine | None = None


class RunSummary(BaseModel):
    results: str = Field(description="The run's results.json, relative to the project folder: test_evidence reads it.")
    status: Status = Field(description="The worst test's status.")
    stop_reason: StopReason
    totals: dict[str, int]
    usage: Usage
    notice: UntrustedOrNone = None
    tests: list[TestLine]


class FailedCheck(BaseModel):
    check: str
    expected: str
    found: Untrusted
    waited: str = Field(description="How long the check waited for its condition; empty for one that does not wait.")


class StepInWords(BaseModel):
    number: int = Field(description="The agent's step, from 1.")
    did: Untrusted
    page: UntrustedOrNone = Field(default=None, description="Where the step ended, when that changed.")
    error: UntrustedOrNone = None
    not_run: UntrustedList = Field(default_factory=list)
    went_wrong: bool = Field(default=False, description="The step to look at first.")


class Evidence(BaseModel):
    results: str
    name: str
    status: Status
    reason: Untrusted
    causes: UntrustedList
    failed_step: FailedStep | None = None
    failed_checks: list[FailedCheck]
    agent_report: UntrustedOrNone = Field(default=None, description="The agent's own report, as JSON.")
    quotes: UntrustedList = Field(default_factory=list, description="What the agent quoted as evidence, as JSON each.")
    steps: list[StepInWords]
    folder: str = Field(description="The test's evidence folder (screenshots, trace.zip, events.jsonl).")
    screenshot: str | None = Field(default=None, description="The final screenshot, returned as an image too.")


class Plan(BaseModel):
    plan: str | None = Field(description="plan.yml with the drafts that passed their trial, or null when none did.")
    yaml: Untrusted = Field(description="The drafts that passed, as manifest YAML (fenced: the LLM wrote them).")
    notes: UntrustedList


class Exported(BaseModel):
    file_name: str
    language: Literal["python", "ts"]
    source: str = Field(description="Where the recording came from: a results folder, or the replay cache.")
    text: Untrusted = Field(description="The Playwright test file (fenced: it holds the page's own names and text).")
