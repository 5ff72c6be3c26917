"""AgentTrace and the agent's report contract: what happened in one agent run, in our own types, outside `agent/` so
that the verdict and the runner never need browser-use."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from preview_qa.events import Event
from preview_qa.manifest import TestSpec
from preview_qa.results import EvidenceSummary, ExpectationOutcome, TestPath, Usage
from preview_qa.saved_state import BrowserState

AgentStatus = Literal["pass", "fail"]


class AgentReport(BaseModel):
    """What the agent must return through its structured done action. Defined once: the model browser-use fills
    (agent/session.py) and the verdict's parser (verdict.py) both derive from it."""

    model_config = ConfigDict(extra="forbid")

    status: AgentStatus = Field(description="pass if the app behaves as the test says, else fail")
    # Validated non-empty, but not said in the JSON schema: OpenAI's strict structured outputs refuse `minLength`.
    # Stripped first: a blank reason names no evidence.
    reason: Annotated[str, StringConstraints(strip_whitespace=True)] = Field(
        min_length=1, description="one sentence: the concrete evidence for the status",
        json_schema_extra=lambda schema: schema.pop("minLength", None))  # type: ignore[misc]
    data: dict[str, Any] | None = Field(default=None, description="the extracted data")


@dataclass(frozen=True)
class LLMFault:
    """One failed LLM call, sorted by exception type: the provider failed, or the model's output was unusable."""

    kind: Literal["provider", "invalid_output"]
    purpose: Literal["agent", "judge"]
    status: int | None
    message: str


@dataclass(frozen=True)
class SecretAttempt:
    """A secret on its way to a host outside the test's allowed hosts, stopped: by its name, never its value."""

    name: str  # a manifest's placeholder name, or the run's own (redact.API_KEY, HEADER..., BASIC_AUTH)
    host: str


@dataclass(frozen=True)
class DoneReport:
    """The agent's done action, as raw as it came: `text` is whatever the structured done produced."""

    text: str | None
    success: bool | None


@dataclass(frozen=True)
class JudgeReport:
    verdict: bool
    reason: str


@dataclass
class AgentTrace:
    """Facts about one test's run, gathered while the browser was alive; the verdict is decided from these alone."""

    steps: int = 0
    done: DoneReport | None = None
    max_steps_reached: bool = False
    llm_faults: list[LLMFault] = field(default_factory=list)
    judge: JudgeReport | None = None
    judge_requested: bool = False
    infrastructure_error: str | None = None  # we could not get a verdict: timeout, crash, budget, unreachable...
    expectations: list[ExpectationOutcome] = field(default_factory=list)
    evidence: EvidenceSummary = field(default_factory=EvidenceSummary)
    usage: Usage = field(default_factory=Usage)
    final_url: str | None = None
    path: TestPath = "agent"  # an agent run sets agent or replayed; the runner marks a fallback run replay-fell-back
    secret_attempts: list[SecretAttempt] = field(default_factory=list)  # each fails the test, whatever else happened
    replay_error: str | None = None  # where and why a cached trace stopped matching: "step 3: click button 'Add': ..."


@dataclass(frozen=True)
class Recording:
    """A passing run's action trace from the cache: browser-use's history dump (secrets as placeholders) and the
    preview origin it was recorded against, so that a new preview URL can be put in its place."""

    origin: str
    history: dict[str, Any]
    screenshots: dict[int, bytes] = field(default_factory=dict)  # each step's page as the agent saw it, by step number


class AgentFn(Protocol):
    """Runs one test: with a recording, replays it instead of asking the agent (see agent/replay.py). With a
    start_state, its browser holds that state before the first navigation; with keep_state, the browser's state at the
    end of the agent's (or replay's) work is handed to it before the run's last events, and a state that cannot be
    read is the test's infrastructure error. It runs on the run's preview unless `origin` names another deployment
    (the baseline)."""

    def __call__(self, spec: TestSpec, url: str, hosts: list[str], secrets: dict[str, str], emit: Callable[[Event], None],
                 recording: Recording | None = None, start_state: BrowserState | None = None,
                 keep_state: Callable[[BrowserState], None] | None = None,
                 origin: str | None = None) -> Awaitable[AgentTrace]: ...
