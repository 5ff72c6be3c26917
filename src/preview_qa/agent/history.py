"""The agent's run as browser-use records it: each step's record as the step ends (what it did, where it led, its
pictures), the budget checked after each, and at the end the done report, the limits hit and the usage."""

from __future__ import annotations

import asyncio
import base64
import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from browser_use import Agent

from preview_qa.agent.evidence import EvidenceRecorder
from preview_qa.agent.page.live import agent_page, session_screenshot
from preview_qa.agent.pool import Lease
from preview_qa.agent.replay.recording import READS_ONLY, VERDICT
from preview_qa.agent.step_watcher import StepWatcher
from preview_qa.agent.timing import Phases
from preview_qa.engine.pricing import budget_exceeded
from preview_qa.events import AgentHistory, Event, Observed, StepRecorded
from preview_qa.manifest.models import TestSpec
from preview_qa.results import Usage
from preview_qa.verdict.agent_run import AgentRun, DoneReport, JudgeReport

START_DECIDED_WAIT_S = 10.0  # before the first LLM call, for the start page to answer or fail


@dataclass
class AgentSteps:
    """browser-use's step callbacks for one test: each step's record is announced as it ends."""

    spec: TestSpec
    emit: Callable[[Event], None]
    agent_run: AgentRun
    steps: StepWatcher
    lease: Lease
    phases: Phases
    evidence: EvidenceRecorder
    usage: Callable[[], Usage]  # the test's tokens and cost so far, counted by us (agent/llm.py)

    async def on_step_start(self, agent: Agent) -> None:
        self.phases.step_started()
        # Playwright's events trail browser-use's navigation: give the start page a moment to be decided.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.evidence.start_decided.wait(), START_DECIDED_WAIT_S)
        if self.evidence.start_failure is not None:  # no LLM call is worth making on a preview that did not answer
            agent.stop()

    async def on_step_end(self, agent: Agent) -> None:
        item = agent.history.history[-1] if agent.history.history else None
        output = agent.state.last_model_output
        errors = [r.error for r in (item.result if item else []) if r.error]
        facts = self.steps.facts(agent)
        session = agent.browser_session
        page = await agent_page(session, self.lease)
        seen = _seen(item)
        png: bytes | None
        # A step that only finished or read (done, extract, ...) left the page as browser-use photographed it for the agent.
        if seen and all(set(action) <= READS_ONLY | {VERDICT} for action in facts.actions):
            url, png = page.url if page is not None else "", seen
        else:
            await self.steps.settle(page)  # the screenshot and URL show where the step led, not a frame mid-navigation
            url, png = page.url if page is not None else "", await session_screenshot(session)
        self.agent_run.steps += 1
        number, name = self.agent_run.steps, self.spec.name
        self.emit(
            StepRecorded(
                name=name,
                number=number,
                goal=(output.next_goal or "") if output else "",
                actions=facts.actions,
                elements=facts.elements,
                url=url,
                error=errors[0] if errors else None,
                screenshot_png=png,
                form_screenshot_png=facts.form_png,
                before_png=seen,
            )
        )
        self.phases.step_ended(f"step {number} (agent)")
        for dropped in facts.dropped:
            self.emit(
                Observed(
                    name=name,
                    kind="actions_dropped",
                    error=False,
                    detail={"step": number, "why": dropped.why, "actions": dropped.actions, "elements": dropped.elements},
                )
            )
        over = budget_exceeded(self.spec, self.usage())
        if over:
            self.agent_run.infrastructure_error = over
            agent.stop()


def _seen(item: Any) -> bytes | None:
    """The page as the step found it: browser-use's own screenshot, which the agent looked at (no second one taken)."""
    with contextlib.suppress(Exception):
        seen = item.state.get_screenshot() if item is not None else None
        return base64.b64decode(seen) if seen else None
    return None


def read_history(
    agent: Agent, agent_run: AgentRun, spec: TestSpec, secrets: dict[str, str], emit: Callable[[Event], None]
) -> None:
    """Into `agent_run`: the done report (and the judge's), whether max_steps ran out, the usage; then the whole history
    is announced (secrets as placeholders)."""
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
    with contextlib.suppress(Exception):
        emit(AgentHistory(name=spec.name, history=history.model_dump(sensitive_data=secrets or None)))
