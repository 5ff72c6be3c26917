"""What the runner announces while it works; reporters subscribe to these and never call back."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, ClassVar, Literal, Self

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from preview_qa.results import Emulation, ExploreResult, PlanSummary, RunResult, TestResult, VisualShot

ObservedKind = Literal[
    "console_error",
    "page_error",
    "failed_request",
    "navigation_blocked",
    "browser_disconnected",  # the browser
    "secret_blocked",  # a secret on its way to a host outside the test's allowed hosts, stopped (agent/guards/network.py)
    "llm_error",
    "vision_off",  # the provider said the model takes no images: no screenshot goes to it from then on
    "output_error",  # an LLM call failed at the provider / its answer was no valid agent output
    "expectation",
    "verdict",
    "replay_fell_back",  # what the checks, the verdict and the replay cache decided
    "recording_not_replayed",  # a recording made under another device or locale than the test's (engine/replay_cache.py)
    "replay_environment",  # a replay whose browser cannot be known to match the recording's (agent/replay/environment.py)
    "timings",  # where the test's time went: wall (and CPU) seconds per phase
    "actions_dropped",  # actions of a step that never ran (over max_actions_per_step, or after the page changed)
    "ignored",  # what every browser does by itself (a favicon fetch): kept, but neither an error nor a cause
    "browser_start_failed",  # a try at starting the test's browser failed (it is tried twice)
    "screenshot_withheld",  # a screenshot not kept, because its secrets could not be masked
    "trace_not_written",  # Playwright's trace of the test could not be stopped or read (agent/evidence/tracing.py)
    "access_denied",  # a page answered 401/403, or was redirected to another host (agent/evidence/evidence.py)
    "settled",  # how long the final page took to settle before its checks, and what it waited for (agent/page/settle.py)
    "dialog",  # a JavaScript dialog the page opened, and how it was answered (agent/evidence/dialogs.py)
    "out_of_context",  # a command of browser-use's that would reach outside the test's browser context, not sent
    "proof",  # --prove: one mutation of the preview replayed, and whether the test failed under it (engine/proof.py)
    "visual_not_compared",  # expect.visual had nothing to compare with: no baseline run's screenshot, no reference
    "test_step",  # a test step (of a test written as steps) ended: how it ran, and its agent steps (agent/steps/)
    "api_request",  # a before:/after: request to the preview's API and its answer, redacted (testdata/api.py)
    "mail",  # an `email` step opened a mail from the test's inbox: its subject, sender, address and links (inbox/)
]


class RunTarget(StrEnum):
    """The deployment a run of a test is on; a run on the baseline is labelled with its name, like an attempt."""

    PREVIEW = "preview"
    BASELINE = "baseline"  # --baseline-url


def attempt_label(number: int) -> str:
    """The label of a test's attempt `number` (from 1) when the test may be retried."""
    return f"attempt-{number}"


@dataclass(frozen=True)
class Event:
    """Base of every event: when it happened."""

    at: float = field(default_factory=time.time, kw_only=True)


@dataclass(frozen=True)
class Evidence(Event):
    """Base of what one run of a test records. `label` tells apart the runs of a test that runs more than once
    (attempt-1, attempt-2, ... when it may be retried; baseline): each one's evidence is kept apart under it."""

    label: str | None = field(default=None, kw_only=True)


@dataclass(frozen=True)
class RunStarted(Event):
    manifest: str
    base_url: str
    test_names: list[str]


@dataclass(frozen=True)
class RunWarning(Event):
    """Something about the whole run the user should fix, said once before any test runs."""

    message: str


@dataclass(frozen=True)
class TestStarted(Event):
    __test__ = False
    name: str


@dataclass(frozen=True)
class StepRecorded(Evidence):
    """One agent step, with a screenshot taken while the browser was still alive."""

    name: str
    number: int
    goal: str
    actions: list[dict[str, Any]]  # secrets already redacted
    url: str  # where the step led, once the page settled
    error: str | None
    screenshot_png: bytes | None
    before_png: bytes | None = None  # the page as the step found it (what the agent saw when it chose the actions)
    elements: list[dict[str, Any] | None] = field(default_factory=list)  # per action: the element's role, name, index
    form_screenshot_png: bytes | None = None  # the filled-in form, just before the step submitted it
    form_screenshot_at: float | None = None  # when (time.time()): the trace's film strip places it there
    settled: str | None = None  # what settling after the step waited for (`waited 1.6 s for the answer on WebSocket /ws`)


@dataclass(frozen=True)
class Observed(Evidence):
    """Anything else worth a line in the test's event log: browser errors, LLM faults, checks, verdicts."""

    name: str
    kind: ObservedKind
    error: bool
    detail: dict[str, Any]  # a Detail's fields for the kinds that have one (emitted with `Detail.observed`)


class Detail(BaseModel):
    """The typed detail of one kind of Observed event: its emitter fills the fields, a reporter reads an events.jsonl
    line back into them. The event carries them as a JSON dict (the runner redacts it as it does any), and its line
    keeps its shape: {"ts", "type": kind, "error", **fields}."""

    model_config = ConfigDict(frozen=True)
    kind: ClassVar[ObservedKind]

    def observed(self, name: str, error: bool = False) -> Observed:
        return Observed(name=name, kind=self.kind, error=error, detail=self.model_dump(mode="json"))

    @classmethod
    def read(cls, line: Mapping[str, Any]) -> Self | None:
        """This detail from an events.jsonl line of its kind; None for another kind, or a line not of this shape (one
        written by another version: the reader shows what it can without it)."""
        if line.get("type") != cls.kind:
            return None
        try:
            return cls.model_validate(line)
        except ValidationError:
            return None


class PageSettled(Detail):
    """How the final page settled before its checks (agent/page/settle.py)."""

    kind: ClassVar[ObservedKind] = "settled"
    outcome: str
    waited_s: float
    waited_for: list[str] = []
    from_url: str = ""
    to_url: str = ""
    moved: bool = False
    polls: list[str] = []
    rendered: bool | None = None
    busy: list[str] = []  # what the page still said was work in progress at the bound ("progressbar 'Saving'")
    summary: str = ""  # `waited 3.1 s for POST /api/save`: what the report shows


class DialogAnswered(Detail):
    """A JavaScript dialog the page opened, and how it was answered (agent/evidence/dialogs.py)."""

    kind: ClassVar[ObservedKind] = "dialog"
    dialog: str  # alert, confirm, prompt, beforeunload
    message: str
    answer: str
    step: int | None  # the step under way; None before the first
    error: str | None = None  # why it was not answered (the page closed under it)

    @field_validator("error", mode="before")
    @classmethod
    def _unanswered(cls, value: Any) -> Any:
        return None if isinstance(value, bool) else value  # a line's own `error: false` when there was none

    def observed(self, name: str, error: bool = False) -> Observed:
        detail = self.model_dump(mode="json", exclude={"error"} if self.error is None else set())
        return Observed(name=name, kind=self.kind, error=self.error is not None, detail=detail)

    def words(self) -> str:
        """`confirm 'Delete Anvil?': ok`, as a step tells it."""
        return f"{self.dialog} {self.message!r}: {self.answer}"


class ActionsDropped(Detail):
    """Actions of a step that never ran (agent/adapter/history.py)."""

    kind: ClassVar[ObservedKind] = "actions_dropped"
    step: int
    why: str  # over max_actions_per_step, or after the page changed
    actions: list[dict[str, Any]]  # as browser-use gave them, secrets redacted
    elements: list[dict[str, Any] | None] = []  # per action: the element's role, name, index


class ReplayFellBack(Detail):
    """Why a replay that did not pass handed its test to the agent (engine/healing.py)."""

    kind: ClassVar[ObservedKind] = "replay_fell_back"
    reason: str  # the replay's verdict
    cause: str = ""  # engine/healing.py's FallBack, and its words
    why: str = ""


class ConsoleError(Detail):
    kind: ClassVar[ObservedKind] = "console_error"
    text: str
    url: str = ""


class PageError(Detail):
    """An uncaught exception in the page."""

    kind: ClassVar[ObservedKind] = "page_error"
    message: str


class Timings(Detail):
    """Where the test's time went (agent/evidence/timing.py): one row per phase, {phase, wall_s, cpu_s}."""

    kind: ClassVar[ObservedKind] = "timings"
    phases: list[dict[str, Any]]
    total_wall_s: float


@dataclass(frozen=True)
class ReplayDrifted(Evidence):
    """A cached recording stopped matching the live app; the agent takes over. The pictures show the step's page as recorded
    and as it is now."""

    name: str
    message: str  # "step 3: input 'Walk the dog' into textbox 'New todo': element not found"
    recorded_png: bytes | None
    live_png: bytes | None


@dataclass(frozen=True)
class PagesVisited(Evidence):
    """A test written as steps ended: the URLs its pages loaded, all steps' (its goals' recordings keep them: which
    routes the test visits, for `run --impacted`)."""

    name: str
    urls: list[str]


@dataclass(frozen=True)
class TestStepEnded(Evidence):
    """A test step ended (a test written as steps): the page once its checks ran (test-step-2.png)."""

    __test__ = False
    name: str
    index: int  # from 1
    png: bytes | None


@dataclass(frozen=True)
class FinalScreenshot(Evidence):
    """The final page, after its checks; for a replay, also the picture of its last step that acted (`step`), whose
    page it is once settled, so that the same page is not photographed twice."""

    name: str
    png: bytes
    step: int | None = None


@dataclass(frozen=True)
class TraceRecorded(Evidence):
    """The test's Playwright trace.zip; the runner redacts its text (secrets/trace_zip.py), the artifacts reporter
    keeps it or not (--trace). None: recorded, but not written, as its run passed (--trace retain-on-failure)."""

    name: str
    zip: bytes | None
    with_screenshots: bool  # whether its film strip shows the test's pictures: not in a run with secrets (tracing.py)


@dataclass(frozen=True)
class AgentHistory(Evidence):
    """browser-use's own serialisation of the agent's history, secrets redacted, and what its pages saw (the replay
    cache keeps both: a replay runs in the same viewport, with the same user agent and locale)."""

    name: str
    history: dict[str, Any]
    environment: Emulation | None = None
    visited: list[str] = field(default_factory=list)  # the URLs its pages loaded (agent/evidence/visits.py)
    step: int | None = None  # a test written as steps: the goal (test step, from 1) whose own recording this is
    before: int = 0  # the test's agent steps before that goal's: its recorded step 1 is the test's agent step before + 1


@dataclass(frozen=True)
class VisualImages:
    """One compared screenshot: its result (paths unset) and the images the artifacts reporter writes."""

    shot: VisualShot
    after: bytes  # this PR's screenshot, full size
    before: bytes | None = None  # the default branch's
    diff: bytes | None = None  # changed pixels in red over a faded copy of the default branch's page


@dataclass(frozen=True)
class VisualCompared(Evidence):
    """expect.visual: a test's screenshots compared with the default branch's (its baseline run, or the reference)."""

    name: str
    images: tuple[VisualImages, ...]


@dataclass(frozen=True)
class VisualReference(Evidence):
    """A passing test's screenshots on the default branch, to keep as its visual reference: by step ("final", "3")."""

    name: str
    shots: tuple[tuple[str, bytes], ...]


@dataclass(frozen=True)
class AttemptFinished(Event):
    """One labelled run of a test ended: an attempt of a test that may be retried (announced before the retry, or
    before TestFinished for the last one), or, after the run, its run on the baseline."""

    name: str
    label: str
    result: TestResult  # that run's own outcome


@dataclass(frozen=True)
class TestFinished(Event):
    __test__ = False
    result: TestResult


@dataclass(frozen=True)
class RunFinished(Event):
    result: RunResult


@dataclass(frozen=True)
class PlanFinished(Event):
    """`run --plan` (issue #39): planning ended after the tests; the PR comment shows its routes and drafts."""

    plan: PlanSummary


@dataclass(frozen=True)
class ExploreFinished(Event):
    """`run --explore` (issue #68): the exploration ended after the tests (and planning); results.json, report.html,
    the job summary and the PR comment show its findings, and its own files go into the results folder's explore/."""

    explore: ExploreResult
