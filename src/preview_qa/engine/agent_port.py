"""What the runner asks of the agent: `AgentFn` runs one test, replaying a `Recording` from the cache when it has one.
The runner calls it and the agent implements it, so neither imports the other."""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import urlsplit

from preview_qa.engine.saved_state import BrowserState
from preview_qa.events import Event
from preview_qa.manifest.models import Inbox, TestSpec
from preview_qa.results import Emulation
from preview_qa.verdict.agent_run import AgentRun
from preview_qa.verdict.proof import ProofRun


@dataclass(frozen=True)
class Recording:
    """A passing run's recording from the cache: browser-use's history dump (secrets as placeholders), the preview
    origin it was recorded against, so that a new preview URL can be put in its place, and what its pages saw."""

    origin: str
    history: dict[str, Any]
    screenshots: dict[int, bytes] = field(default_factory=dict)  # each step's page as the agent saw it, by step number
    environment: Emulation | None = None  # viewport, scale, user agent, locale...; None: recorded before they were kept
    visited: list[str] = field(default_factory=list)  # the URLs its pages loaded, redirects and the final one included

    def pages(self) -> list[str]:
        """The paths of the preview's pages it visited (URLs on other hosts are no page of the app), in order."""
        found = (urlsplit(url) for url in self.visited)
        here = urlsplit(self.origin).netloc
        return list(dict.fromkeys(u.path or "/" for u in found if u.netloc == here))


@dataclass(frozen=True)
class StepRecordings:
    """A test written as steps: each goal's own recording, by test step (from 1); exact steps are their own recording,
    and a goal without one runs the agent."""

    by_step: dict[int, Recording] = field(default_factory=dict)

    def joined(self, later: object) -> StepRecordings:
        """These, with the goals `later` recorded (a run's agent, a heal) in their place."""
        return StepRecordings({**self.by_step, **(later.by_step if isinstance(later, StepRecordings) else {})})


Recorded = Recording | StepRecordings  # what a test's run replays: a task's recording, or its goals'


@dataclass(frozen=True)
class RecordedElsewhere:
    """No recording of the test under its own device and locale, but one under others (`label` says which): a
    recording replays only as it was recorded, so the agent runs the test afresh."""

    label: str


@dataclass(frozen=True)
class AgentRequest:
    """One run of one test, as the runner asks it of the agent: made once by the runner, read by the agent. `emit` and
    `keep_state` are the runner's callbacks for this run alone (its label, its test), so they travel with it."""

    spec: TestSpec
    start_url: str
    origin: str  # the deployment under test: the preview's origin, or the baseline's on its run
    allowed_hosts: list[str]
    secrets: dict[str, str]
    emit: Callable[[Event], None]  # the runner redacts secrets from everything it passes on
    recording: Recording | None = None  # replay this instead of running the agent
    start_state: BrowserState | None = None  # load this saved login before the first navigation
    keep_state: Callable[[BrowserState], None] | None = None  # receives the browser's state once the agent is done
    log_requests: bool = False  # --prove: keep the requests to the preview and a hash of its pages in AgentRun, in memory
    proof: ProofRun | None = None  # a proof's replay: under this mutation, no non-GET reaching the preview
    base_url: str = ""  # where a step's `open: /path` leads (the deployment's URL, with any path it has)
    step_recordings: dict[int, Recording] = field(default_factory=dict)  # a test written as steps: each goal's own
    # Whether the run's trace is worth writing, asked once it ended (its checks and evidence in): --trace
    # retain-on-failure writes none for a run whose own verdict is a pass; the recording itself is made all the same
    trace_wanted: Callable[[AgentRun], bool] = field(default=lambda run: True)
    warn: Callable[[str], None] = field(default=lambda message: None)  # a line about the whole run (RunWarning)
    inbox: Inbox | None = None  # the manifest's mail catcher: the run gets an address of its own on it (inbox/)


def replaying(request: AgentRequest, recorded: Recorded | None) -> AgentRequest:
    """The request, replaying `recorded`: a task's recording, or a step test's goals' recordings."""
    if isinstance(recorded, StepRecordings):
        return dataclasses.replace(request, recording=None, step_recordings=dict(recorded.by_step))
    return dataclasses.replace(request, recording=recorded)


class AgentFn(Protocol):
    """Runs one test: with a recording, replays it instead of asking the agent (see agent/replay/player.py). With a
    start_state, its browser holds that state before the first navigation; with keep_state, the browser's state at the
    end of the agent's (or replay's) work is handed to it before the run's last events, and a state that cannot be
    read is the test's infrastructure error."""

    def __call__(self, request: AgentRequest) -> Awaitable[AgentRun]: ...
