"""What the runner asks of the agent: `AgentFn` runs one test, replaying a `Recording` from the cache when it has one.
The runner calls it and the agent implements it, so neither imports the other."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from preview_qa.engine.saved_state import BrowserState
from preview_qa.events import Event
from preview_qa.manifest.models import TestSpec
from preview_qa.results import Emulation
from preview_qa.verdict.agent_run import AgentRun


@dataclass(frozen=True)
class Recording:
    """A passing run's recording from the cache: browser-use's history dump (secrets as placeholders), the preview
    origin it was recorded against, so that a new preview URL can be put in its place, and what its pages saw."""

    origin: str
    history: dict[str, Any]
    screenshots: dict[int, bytes] = field(default_factory=dict)  # each step's page as the agent saw it, by step number
    environment: Emulation | None = None  # viewport, scale, user agent, locale...; None: recorded before they were kept


@dataclass(frozen=True)
class RecordedElsewhere:
    """No recording of the test under its own device and locale, but one under others (`label` says which): a
    recording replays only as it was recorded, so the agent runs the test afresh."""

    label: str


class AgentFn(Protocol):
    """Runs one test: with a recording, replays it instead of asking the agent (see agent/replay/player.py). With a
    start_state, its browser holds that state before the first navigation; with keep_state, the browser's state at the
    end of the agent's (or replay's) work is handed to it before the run's last events, and a state that cannot be
    read is the test's infrastructure error. It runs on the run's preview unless `origin` names another deployment
    (the baseline)."""

    def __call__(
        self,
        spec: TestSpec,
        url: str,
        hosts: list[str],
        secrets: dict[str, str],
        emit: Callable[[Event], None],
        recording: Recording | None = None,
        start_state: BrowserState | None = None,
        keep_state: Callable[[BrowserState], None] | None = None,
        origin: str | None = None,
    ) -> Awaitable[AgentRun]: ...
