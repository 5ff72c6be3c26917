"""AgentTrace: what happened during one agent run, in our own types, independent of browser-use's."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from preview_qa.results import EvidenceSummary, ExpectationOutcome, Usage


@dataclass(frozen=True)
class LLMFault:
    """One failed LLM call, sorted by exception type: the provider failed, or the model's output was unusable."""

    kind: Literal["provider", "invalid_output"]
    purpose: Literal["agent", "judge"]
    status: int | None
    message: str


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
    path: str = "agent"  # agent | replayed (the runner marks a fallback run replay-fell-back)
    replay_error: str | None = None  # where and why a cached trace stopped matching: "step 3: click button 'Add': ..."


@dataclass(frozen=True)
class Recording:
    """A passing run's action trace from the cache: browser-use's history dump (secrets as placeholders) and the
    preview origin it was recorded against, so that a new preview URL can be put in its place."""

    origin: str
    history: dict[str, Any]
    screenshots: dict[int, bytes] = field(default_factory=dict)  # each step's page as the agent saw it, by step number
