"""A test written as steps on one browser context: the task's session (agent/session.py), whose drive opens `start`
and then runs each step in turn: an exact one by Playwright, a goal by its own recording or by the agent (healing from
the current page when its replay no longer holds), then that step's checks once its page has settled, and its
screenshot. The first step that does not pass ends the drive; the test's own checks are judged only after all passed."""

from __future__ import annotations

import dataclasses
import time
from typing import TYPE_CHECKING

from preview_qa.agent.adapter.live import SHOT_TIMEOUT_S, agent_page
from preview_qa.agent.browsers.pool import Lease
from preview_qa.agent.guards import masking
from preview_qa.agent.guards.mutations import Proving
from preview_qa.agent.guards.network import ActionGuard
from preview_qa.agent.page.final_page import check_settled_page, checks_at_once, settle
from preview_qa.agent.session import RunTools, TestSession, check_wait
from preview_qa.agent.steps.exact import ActionFailed, ExactTools, MailTools, act
from preview_qa.engine.agent_port import AgentRequest
from preview_qa.engine.healing import fall_back
from preview_qa.events import AgentHistory, Event, Observed, PagesVisited, ReplayFellBack, TestStepEnded
from preview_qa.manifest.models import Expectations, TestSpec
from preview_qa.manifest.steps import StepKind
from preview_qa.results import Execution, ExpectationOutcome, FallBack, Status, StepExecution, Usage, error_line
from preview_qa.verdict.agent_run import AgentRun, StepRun
from preview_qa.verdict.checks.url import unmoved
from preview_qa.verdict.steps import step_decision, step_execution

if TYPE_CHECKING:
    from playwright.async_api import Page


class SteppedSession(TestSession):
    """One test written as steps; `run()` goes through the task's phases once, its drive stepping."""

    def __init__(self, run: AgentRequest, tools: RunTools):
        super().__init__(run, tools)
        steps = run.spec.steps or []
        goals = [i for i, step in enumerate(steps, start=1) if step.kind is StepKind.DO]
        # No agent to prepare while the browser starts when every goal replays (a heal prepares it then).
        self.replaying = all(i in run.step_recordings for i in goals) or run.proof is not None
        self.page: Page | None = None  # where the steps act: the tab the last step left
        self.began = ""  # the URL the step under way began on: a url check that held there and never left cannot fail
        self.passed = False  # every step passed: the test's own checks are judged on the final page
        self.goal: tuple[StepRun, TestSpec, int, Usage] | None = None  # the agent's goal under way, and where it began
        # --prove: the checks that hold on the start page before the first action are every step's, named as the
        # test's expectations name them ("step 2 text"), and the test's own
        checked = next(
            (run.spec.step_checks(i) for i in range(1, len(steps) + 1) if run.spec.step_checks(i).has_page_checks), None
        )
        self.proving = Proving(
            run.origin, run.log_requests, run.proof, self.policy.last_action, checked or run.spec.expect, self._look_at_start
        )

    async def drive_test(self, lease: Lease) -> None:
        """Open `start`, then each step in turn until one does not pass."""
        spec = self.test_run.spec
        assert spec.steps is not None
        page = next((p for p in lease.context.pages if not p.is_closed()), None) or await lease.context.new_page()
        self.page = self.final_page = page
        if not await self._open_start(page):
            return
        await self.proving.before_first_action(page)  # --prove: which checks hold before any step acts
        for index, step in enumerate(spec.steps, start=1):
            step_run = StepRun(index, step.kind, StepExecution.EXACT if step.kind.exact else StepExecution.AGENT)
            self.result.step_runs.append(step_run)
            clock = time.monotonic()
            try:
                passed = await self._step(step_run)
            finally:
                step_run.duration_s = time.monotonic() - clock
            if not passed or self.result.infrastructure_error is not None:
                return
        self.passed = True

    async def _open_start(self, page: Page) -> bool:
        """The browser opens `start` before the first step, as the agent's first navigation does for a task."""
        self.settler.acted()
        try:
            await page.goto(self.test_run.start_url, wait_until="load", timeout=0)  # the test's own timeout bounds it
        except Exception as e:
            self.result.infrastructure_error = f"preview unreachable: {error_line(e)}"
            return False
        return True

    async def _step(self, step_run: StepRun) -> bool:
        """One step, its checks and its picture; whether it passed."""
        spec, index = self.test_run.spec, step_run.index
        self.began = self.page.url if self.page is not None else ""
        if step_run.kind is StepKind.DO:
            await self._goal(step_run)
        else:
            await self._exact(step_run)
        if self.page is not None and not self.page.is_closed() and _worth_checking(step_run):
            expect = spec.step_checks(index)
            # A step with no checks settles only a page still busy (settle, then judge: nothing to judge); the test's
            # own checks settle the last page, and the next step waits for its element or settles its own start. A
            # step's picture compared on the baseline (expect.visual steps: true) is of a settled page
            compared = self.visual is not None and self.visual.visual.steps
            if expect.checks_anything or compared or self.settler.waiting(self.page):
                checked = await self._checks(self.page, expect)
                if checked is None:  # its page still said it was busy at the bound: the test errors in this step
                    await self._ended(step_run, Status.ERRORED)
                    return False
                step_run.run.expectations = checked
        step_run.finished = True
        # checked=True: whether a page that addressed the agent fails its goal is judged at the end, on what the pages
        # showed (verdict/steps.py), as its quotes are
        decision = step_decision(spec, step_run, self.result, judge_drift=self.test_run.proof is not None, checked=True)
        await self._ended(step_run, decision.verdict.status)
        return decision.verdict.status is Status.PASSED

    async def _exact(self, step_run: StepRun) -> None:
        spec, run = self.test_run.spec, self.test_run
        assert spec.steps is not None and self.page is not None
        step = spec.steps[step_run.index - 1]
        acting = self._acting
        mail = None if self.mailbox is None else MailTools(self.mailbox, self.tools.redactor.add, run.emit)
        tools = ExactTools(run.base_url or run.origin, spec, run.secrets, ActionGuard(self.policy), acting, mail)
        try:
            self.page = await act(step, self.page, tools, spec.step_checks(step_run.index).timeout)
        except ActionFailed as e:
            step_run.action_error = str(e)

    def _acting(self, action: dict[str, object], element: dict[str, object] | None) -> None:
        self.settler.acted()
        self.evidence.acted(action, element)

    async def _goal(self, step_run: StepRun) -> None:
        """The goal's recording replayed, handed to the agent from the current page if it no longer holds (unless
        heal: false, or in a proof); or the agent, when there is no recording."""
        run, index = self.test_run, step_run.index
        goal, recording = run.spec.goal(index), run.step_recordings.get(index)
        if recording is None:
            if run.proof is not None:  # a proof replays what the test's own run did, never the agent
                step_run.run.infrastructure_error = "no recording of this goal to replay"
                return
            step_run.run = await self._agent(step_run, goal)
            return
        assert self.page is not None
        replayed = AgentRun(execution=Execution.REPLAYED)
        step_run.execution, first = StepExecution.REPLAY, self.result.steps
        page = await self.replay(recording, self.page, goal, replayed, before=first)
        self.result.steps += replayed.steps
        step_run.agent_steps = (first + 1, self.result.steps) if replayed.steps else None
        self.page = page or (self.replayer.page if self.replayer is not None else self.page)
        self.replayer = None
        if (replayed.replay_error is None or run.proof is not None) and self.page is not None:  # a proof judges a drift
            checked = await self._checks(self.page, goal.expect)
            replayed.expectations = checked or []
            if checked is None:  # its page still said it was busy at the bound: an error, no agent taking over
                replayed.infrastructure_error = self.result.infrastructure_error
                step_run.run, step_run.drift = replayed, replayed.replay_error
                return
        step_run.run, step_run.drift = replayed, replayed.replay_error
        handover = None if run.proof is not None else fall_back(goal, replayed)
        if handover is None:
            return
        why = ReplayFellBack(reason=handover.replay_verdict.reason, cause=handover.cause.value, why=handover.cause.words)
        run.emit(why.observed(run.spec.name))
        step_run.fell_back = handover.cause
        healed = await self._agent(step_run, goal)
        healed.usage = replayed.usage + healed.usage
        step_run.run = healed
        step_run.execution = StepExecution.HEALED if handover.cause is FallBack.PAGE_CHANGED else StepExecution.AGENT

    async def _agent(self, step_run: StepRun, goal: TestSpec) -> AgentRun:
        """The agent carries the goal out from the current page, on the test's browser-use session (started now, if no
        goal needed it before), its steps numbered on from the test's."""
        await self.start_agent_session()
        recorder = self._llm()
        self.goal = (step_run, goal, self.result.steps, recorder.usage())
        faults = len(recorder.faults)
        agent = await self.drive_agent(goal, None)
        if self.hooks is not None:  # the goal's last step, pictured before its checks move on
            await self.hooks.finish(shoot=True)
            self.hooks = None
        done = self._read_goal(agent)
        done.llm_faults = list(recorder.faults[faults:])
        if self.session is not None and self.lease is not None:
            self.page = await agent_page(self.session, self.lease)
        return done

    def _read_goal(self, agent: object) -> AgentRun:
        """The goal's run as browser-use recorded it, its history announced as that step's own recording."""
        from preview_qa.agent.adapter.history import read_history

        assert self.goal is not None
        step_run, goal, before, usage = self.goal
        self.goal, self.agent = None, None
        done = AgentRun(execution=Execution.AGENT, judge_requested=goal.judge)
        emit = self.test_run.emit

        def as_steps(event: Event) -> None:
            emit(dataclasses.replace(event, step=step_run.index, before=before) if isinstance(event, AgentHistory) else event)

        read_history(agent, done, goal, self.test_run.secrets, as_steps, self.steps)  # type: ignore[arg-type]
        self.steps.located.clear()  # keyed by browser-use's step numbers, which the next goal's agent starts again
        done.steps = self.result.steps - before
        step_run.agent_steps = (before + 1, self.result.steps) if done.steps else None
        done.usage = self._llm().usage() - usage
        return done

    async def _checks(self, page: Page, expect: Expectations) -> list[ExpectationOutcome] | None:
        """The step's page checks once its page has settled, bounded by its expect.timeout and the test's deadline;
        None, and the test's error, if the page still said it was busy at the bound."""
        run = self.test_run
        wait = check_wait(expect, self.deadline - time.monotonic())
        with self.phases("a step's checks (settling, then the checks)"):
            settled = await settle(run.spec, page, self.settler, wait, run.emit)
            if (busy := settled.busy_error()) is not None:
                self.result.infrastructure_error = busy
                return None
            outcomes = await check_settled_page(expect, page, self.settler, settled, wait, self.sightings, final=False)
            outcomes = unmoved(outcomes, expect.url, self.began, page.url)
        for outcome in outcomes:
            detail = outcome.model_dump()
            run.emit(Observed(name=run.spec.name, kind="expectation", error=not outcome.ok, detail=detail))
        return outcomes

    async def _look_at_start(self, page: Page) -> list[ExpectationOutcome] | None:
        """Every step's checks and the test's own on the start page, each looked at once (--prove's weak rule)."""
        spec, found = self.test_run.spec, []
        total = len(spec.steps or [])
        for index in range(1, total + 1):
            outcomes = await checks_at_once(spec.step_checks(index), page) or []
            found += [o.model_copy(update={"check": f"step {index} {o.check}"}) if total > 1 else o for o in outcomes]
        return found + (await checks_at_once(spec.expect, page) or [])

    async def _ended(self, step_run: StepRun, status: Status) -> None:
        """The step's line in the events and its picture (the page once its checks ran)."""
        run = self.test_run
        detail = {
            "index": step_run.index,
            "kind": step_run.kind.value,
            "execution": step_execution(step_run, status).value,
            "status": status.value,
            "agent_steps": list(step_run.agent_steps) if step_run.agent_steps else None,
        }
        run.emit(Observed(name=run.spec.name, kind="test_step", error=status is not Status.PASSED, detail=detail))
        png = None
        if self.page is not None and not self.page.is_closed():
            try:
                png = await masking.screenshot(self.page, self.mask, timeout=SHOT_TIMEOUT_S * 1000)
            except Exception:
                png = None
        run.emit(TestStepEnded(name=run.spec.name, index=step_run.index, png=png))
        visual = self.visual  # expect.visual with steps: true compares each test step's page, labelled with it
        if visual is not None and visual.visual.steps and status is Status.PASSED and self.page is not None:
            await visual.take(self.page, str(step_run.index), SHOT_TIMEOUT_S)

    def collect(self) -> None:
        """What the run left: a goal the test stopped in (its timeout) is read as its own step's."""
        if self.agent is not None and self.goal is not None:
            step_run = self.goal[0]
            step_run.run = self._read_goal(self.agent)
        super().collect()
        self.result.execution = _how_run(self.result)
        self.test_run.emit(PagesVisited(name=self.test_run.spec.name, urls=list(self.result.visited)))

    async def last_page(self, lease: Lease) -> Page | None:
        return self.page

    def judged_at_end(self) -> bool:
        return self.passed and self.result.infrastructure_error is None

    def _step_in_progress(self) -> int | None:
        """The agent step under way: a goal's (by the agent or its replay), else none."""
        if self.goal is not None:
            return self.result.steps + 1
        return self.replayer.step if self.replayer is not None else None


def _worth_checking(step_run: StepRun) -> bool:
    """A step is checked unless it could not act, or its goal did not end in a report (its replay checked itself)."""
    if step_run.action_error is not None or step_run.run.infrastructure_error is not None:
        return False
    if step_run.kind is not StepKind.DO:
        return True
    return step_run.execution is not StepExecution.REPLAY and step_run.run.done is not None


def _how_run(result: AgentRun) -> Execution:
    """A step test's `path`: a goal handed to the agent from its replay, else any goal by the agent, else any replayed,
    else exact steps alone."""
    executions = {s.execution for s in result.step_runs}
    if StepExecution.HEALED in executions or any(s.fell_back for s in result.step_runs):
        return Execution.REPLAY_FELL_BACK
    if StepExecution.AGENT in executions:
        return Execution.AGENT
    return Execution.REPLAYED if StepExecution.REPLAY in executions else Execution.EXACT
