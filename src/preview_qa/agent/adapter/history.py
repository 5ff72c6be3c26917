"""The agent's run as browser-use records it: each step's record (what it did, where it led, its pictures), the budget
checked after each, and at the end the done report, the limits hit and the usage.

One screenshot a step, shared by the model and the evidence: the page a step led to is the one browser-use photographs
for the model at the start of the next step, once its own wait for the page is over. So a step's record is announced
when the next step's model answer arrives (or at once, for a step that only read or reported, whose page the model
saw before it); the last step's, if it changed the page, when the run ends, with a screenshot of its own."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import dataclasses
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from browser_use import Agent

from preview_qa.agent.adapter.live import agent_page, session_screenshot
from preview_qa.agent.adapter.step_watcher import START_SETTLE_S, StepWatcher
from preview_qa.agent.browsers.pool import Lease
from preview_qa.agent.evidence.action_names import READS_ONLY, VERDICT
from preview_qa.agent.evidence.evidence import EvidenceRecorder
from preview_qa.agent.evidence.timing import Phases
from preview_qa.engine.pricing import budget_exceeded
from preview_qa.events import ActionsDropped, AgentHistory, Event, StepRecorded
from preview_qa.manifest.models import TestSpec
from preview_qa.results import Usage
from preview_qa.verdict.agent_run import AgentRun, DoneReport, JudgeReport

if TYPE_CHECKING:
    from browser_use.agent.views import AgentOutput
    from browser_use.browser import BrowserSession
    from browser_use.browser.views import BrowserStateSummary
    from playwright.async_api import Page

START_DECIDED_WAIT_S = 10.0  # before the first LLM call, for the start page to answer or fail


@dataclass
class AgentSteps:
    """browser-use's step callbacks for one test: each step's record, with the picture of where it led."""

    spec: TestSpec
    emit: Callable[[Event], None]
    agent_run: AgentRun
    steps: StepWatcher
    lease: Lease
    phases: Phases
    evidence: EvidenceRecorder
    usage: Callable[[], Usage]  # the test's tokens and cost so far, counted by us (agent/adapter/llm.py)
    unshot: StepRecorded | None = None  # the last step's record, until the next step's capture pictures where it led
    session: BrowserSession | None = None
    before_first_action: Callable[[Page], Awaitable[None]] | None = None  # on the start page, once settled (--prove)

    async def on_step_start(self, agent: Agent) -> None:
        self.phases.step_started()
        # Playwright's events trail browser-use's navigation: give the start page a moment to be decided.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.evidence.start_decided.wait(), START_DECIDED_WAIT_S)
        if self.evidence.start_failure is not None:  # no LLM call is worth making on a preview that did not answer
            agent.stop()
        elif self.agent_run.steps == 0:  # the first step sees the start page rendered, not an app's empty shell
            page = await agent_page(agent.browser_session, self.lease)
            await self.steps.settle(page, START_SETTLE_S)
            if page is not None and self.before_first_action is not None:
                await self.before_first_action(page)

    async def on_step_end(self, agent: Agent) -> None:
        item = agent.history.history[-1] if agent.history.history else None
        output = agent.state.last_model_output
        errors = [r.error for r in (item.result if item else []) if r.error]
        facts = self.steps.facts(agent)
        session = agent.browser_session
        page = await agent_page(session, self.lease)
        seen = _seen(item)
        self.session = session
        await self._announce_unshot(seen)  # this step's capture is where the step before it led
        # A step that only finished or read (done, extract, ...) left the page as browser-use photographed it for the agent.
        read_only = all(set(action) <= READS_ONLY | {VERDICT} for action in facts.actions)
        picture = seen if read_only else None
        # the URL (and the picture) show where the step led, not a mid-navigation frame nor a page before its answer
        settled = None if picture is not None else await self.steps.settle(page)
        self.agent_run.steps += 1
        number, name = self.agent_run.steps, self.spec.name
        record = StepRecorded(
            name=name,
            number=number,
            goal=(output.next_goal or "") if output else "",
            actions=facts.actions,
            elements=facts.elements,
            url=page.url if page is not None else "",
            error=errors[0] if errors else None,
            screenshot_png=picture,
            form_screenshot_png=facts.form_png,
            form_screenshot_at=facts.form_at,
            before_png=seen,
            settled=settled.line() if settled is not None else None,
        )
        if picture is not None:
            self.emit(record)
        else:
            self.unshot = record
        self.phases.step_ended(f"step {number} (agent)")
        for dropped in facts.dropped:
            self.emit(
                ActionsDropped(step=number, why=dropped.why, actions=dropped.actions, elements=dropped.elements).observed(name)
            )
        over = budget_exceeded(self.spec, self.usage())
        if over:
            self.agent_run.infrastructure_error = over
            agent.stop()

    async def on_new_step(self, state: BrowserStateSummary, output: AgentOutput, n_steps: int) -> None:
        """browser-use's new-step callback, once the model answered: the screenshot it took for the model, before any
        of the new step's actions ran, is the picture of where the last step led."""
        await self._announce_unshot(_decoded(state.screenshot))
        await self.steps.on_new_step(state, output, n_steps)

    async def finish(self, shoot: bool) -> None:
        """The run is over: the last step, if it changed the page, is pictured now (unless the test is being
        cancelled: then it is announced without a picture)."""
        await self._announce_unshot(None, shoot)

    async def _announce_unshot(self, png: bytes | None, shoot: bool = True) -> None:
        """Announce the step waiting for its picture with `png`; none (browser-use's capture failed or was withheld)
        means one of our own, as the page still is where the step led."""
        record, self.unshot = self.unshot, None
        if record is not None:
            if png is None and shoot:
                png = await session_screenshot(self.session)
            self.emit(dataclasses.replace(record, screenshot_png=png))


def _decoded(screenshot: str | None) -> bytes | None:
    with contextlib.suppress(Exception):
        return base64.b64decode(screenshot) if screenshot else None
    return None


def _seen(item: Any) -> bytes | None:
    """The page as the step found it: browser-use's own screenshot, which the agent looked at (no second one taken)."""
    with contextlib.suppress(Exception):
        return _decoded(item.state.get_screenshot() if item is not None else None)
    return None


def read_history(
    agent: Agent,
    agent_run: AgentRun,
    spec: TestSpec,
    secrets: dict[str, str],
    emit: Callable[[Event], None],
    steps: StepWatcher,
) -> None:
    """Into `agent_run`: the done report (and the judge's), whether max_steps ran out, the usage; then the whole history
    is announced (secrets as placeholders), each recorded element with its locator's facts (`steps.with_locators`)."""
    history = agent.history
    last = history.history[-1].result[-1] if history.history and history.history[-1].result else None
    if last is not None and last.is_done:
        agent_run.done = DoneReport(text=last.extracted_content, success=last.success)
        if last.judgement is not None:
            agent_run.judge = JudgeReport(
                verdict=last.judgement.verdict, reason=last.judgement.failure_reason or last.judgement.reasoning or ""
            )
    gave_up = agent.state.consecutive_failures >= agent.settings.max_failures + int(agent.settings.final_response_after_failure)
    agent_run.max_steps_reached = (
        agent_run.done is None and agent.state.n_steps > spec.max_steps and not agent.state.stopped and not gave_up
    )
    agent_run.unusable_since = _unusable_since(
        [(item.metadata.step_number if item.metadata else 0, item.model_output is not None) for item in history.history],
        forced_done=agent_run.max_steps_reached,
    )
    with contextlib.suppress(Exception):
        dump = steps.with_locators(history.model_dump(sensitive_data=secrets or None))
        emit(AgentHistory(name=spec.name, history=dump, environment=agent_run.environment, visited=agent_run.visited))


def _unusable_since(answered: list[tuple[int, bool]], forced_done: bool) -> int | None:
    """The agent step from which no step had a usable answer from the model, if it never had one again. Step 0 is
    browser-use's own opening navigation; with `forced_done` the last step, where browser-use lets the model only
    report (its max_steps), is not counted: failing to report then is running out of steps, not stalling."""
    steps = [(number, ok) for number, ok in answered if number > 0]
    since = None
    for number, ok in steps[:-1] if forced_done else steps:
        since = None if ok else since or number
    return since
