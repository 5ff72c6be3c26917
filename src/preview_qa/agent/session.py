# Over 400 lines: one test's named phases in one class, read top to bottom (the task's and, through SteppedSession,
# a test written as steps); what they share is its attributes.
"""One test on a browser, in named phases: acquire a fresh context, drive it (agent or replay), collect what the run
left, finish on the live page (checks, final screenshot) before the context closes. What needs browser-use (the
agent, its session, the LLM's client) is imported where a test first needs it: a replay never loads browser-use."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import importlib
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from preview_qa.agent.adapter.live import SHOT_TIMEOUT_S, agent_page, page_screenshot, session_screenshot
from preview_qa.agent.adapter.step_watcher import RESTLESS_S, SETTLE_S, StepWatcher
from preview_qa.agent.browsers.launch import BrowserSetup, BrowserStartError
from preview_qa.agent.browsers.pool import BrowserPool, Lease
from preview_qa.agent.browsers.storage import StateError, load_state, read_state
from preview_qa.agent.evidence.comparison import ComparisonShots
from preview_qa.agent.evidence.dialogs import DialogAnswerer
from preview_qa.agent.evidence.evidence import EvidenceRecorder
from preview_qa.agent.evidence.links import request_links
from preview_qa.agent.evidence.timing import Phases
from preview_qa.agent.evidence.tracing import TestTrace
from preview_qa.agent.guards import masking
from preview_qa.agent.guards.mutations import Proving
from preview_qa.agent.guards.network import ActionGuard, RequestPolicy
from preview_qa.agent.page.final_page import check_settled_page, checks_at_once, ground_quotes, settle
from preview_qa.agent.page.settle import PageSettler, Settled
from preview_qa.agent.page.sightings import Sightings
from preview_qa.agent.replay.environment import emulation_for, environment_gap
from preview_qa.agent.replay.player import Replayer
from preview_qa.agent.replay.recording import recorded_steps
from preview_qa.agent.vision import VisionSwitch
from preview_qa.engine.agent_port import AgentRequest, Recording
from preview_qa.events import FinalScreenshot, Observed, ReplayDrifted
from preview_qa.inbox.catchers import CatcherError, catcher
from preview_qa.inbox.mail import Mailbox, addressed, for_the_agent, new_address, readdressed, tokens
from preview_qa.manifest.models import Expectations, TestSpec
from preview_qa.manifest.steps import INBOX
from preview_qa.results import Execution, ExpectationOutcome, error_line, one_line
from preview_qa.secrets.redact import Redactor
from preview_qa.testdata.api import TestData
from preview_qa.verdict.agent_run import AgentRun
from preview_qa.verdict.checks.problems import problem_outcomes
from preview_qa.verdict.checks.url import unmoved
from preview_qa.verdict.decide import replay_needs_llm_check

if TYPE_CHECKING:
    from browser_use import Agent
    from playwright.async_api import Page

    from preview_qa.agent.adapter.context_session import ContextSession
    from preview_qa.agent.adapter.history import AgentSteps
    from preview_qa.agent.adapter.llm import MeteredChat, RecordingLLM

CLEANUP_RESERVE_S = 10.0  # at most, of each test's timeout: kept for checks, the final screenshot and teardown
AGENT_MODULES = [f"preview_qa.agent.adapter.{name}" for name in ("connect", "build", "history")]


@dataclass(frozen=True)
class RunTools:
    """What the run's AgentFn holds for every test: the LLM, the browsers and every secret of the run."""

    make_llm: Callable[[], MeteredChat]
    browser: BrowserSetup
    pool: BrowserPool  # the run's browsers; the test gets a fresh context in one of them
    workroot: str  # the run's folder for browser profiles: every browser under it is killed when the run ends
    redactor: Redactor  # every secret of the run: scrubbed from LLM requests, masked in screenshots
    vision: VisionSwitch = field(default_factory=VisionSwitch)  # --vision: whether screenshots go to the model


async def run_agent(run: AgentRequest, tools: RunTools) -> AgentRun:
    """Run one test's agent (or replay its recording) to the end or its deadline and return the facts; never raises for
    the test's own failures. The test's timeout starts once it has its browser context: starting a browser, when the
    pool has none idle, has its own bound (see agent/browsers/launch.py)."""
    return await TestSession(run, tools).run()


class TestSession:
    """One test's session; `run()` goes through the phases once."""

    __test__ = False

    def __init__(self, run: AgentRequest, tools: RunTools):
        run, self.mailbox = with_inbox(run)
        self.test_run, self.tools, spec = run, tools, run.spec
        self.replaying = run.recording is not None  # the one mark of how the test runs: no phase asks what exists
        execution = Execution.REPLAYED if self.replaying else Execution.AGENT
        self.result = AgentRun(execution=execution, judge_requested=spec.judge and not self.replaying)
        self.workdir = tempfile.mkdtemp(prefix="test-", dir=self.tools.workroot)
        self.sightings = Sightings(self._step_in_progress, run.origin)  # what the pages showed a person, from the start
        self.evidence = EvidenceRecorder(spec.name, run.origin, run.start_url, run.emit, marked=self.sightings.mark)
        self.policy = RequestPolicy(
            spec.name, run.allowed_hosts, self.tools.redactor, run.emit, run.origin, self.tools.browser.extra_headers
        )
        self.policy.last_action = lambda: self.evidence.last_action
        look = lambda page: checks_at_once(spec.expect, page)  # noqa: E731  before the first action
        self.proving = Proving(run.origin, run.log_requests, run.proof, self.policy.last_action, spec.expect, look)  # --prove
        self.mask = masking.Mask(self.tools.redactor, self.evidence.screenshot_withheld)
        self.settler = PageSettler()  # follows the pages from the start: each step's page and the final one settle on it
        self.steps = StepWatcher(lambda: session_screenshot(self.session), self.settler, self.evidence.acted)
        self.phases = Phases(self.tools.browser.measure_cpu)
        self.trace = TestTrace(spec.name, with_screenshots=False, emit=run.emit)  # started only with --trace on a context
        self.deadline = time.monotonic() + spec.timeout  # set again once the context is ready: a start has its own bound
        self.lease: Lease | None = None
        self.preparing: asyncio.Task[MeteredChat] | None = None  # an agent's modules and LLM, while its browser starts
        self.session: ContextSession | None = None  # browser-use's, for an agent (a replay drives Playwright alone)
        self.agent: Agent | None = None
        self.hooks: AgentSteps | None = None  # the agent's step callbacks
        self.recorder: RecordingLLM | None = None
        self.final_page: Page | None = None  # where a replay ended
        self.replayer: Replayer | None = None  # a replay's player, while it runs: the step a dialog belongs to
        self.limit: asyncio.Timeout | None = None
        self.trace_due = False  # the test's context is traced and its run has finished on its page
        into = (self.mask, self._settle_step, self.phases, run.emit, self.result.visual_shots)
        self.visual = None if spec.expect.visual is None else ComparisonShots(spec.name, spec.expect.visual, *into)
        headers = self.tools.browser.extra_headers  # the preview's own: its API requests go to its origin alone
        self.data = TestData(spec, run.base_url or run.origin, headers, run.secrets, run.emit, self.tools.redactor.text)

    async def run(self) -> AgentRun:
        async with contextlib.AsyncExitStack() as stack:  # the lease ends last: after the checks and the teardown
            try:
                await self.acquire(stack)
                async with asyncio.timeout(self._drive_limit()) as self.limit:
                    await self.drive()
            except Exception as e:
                self.result.infrastructure_error = self._stopped_by(e)
            finally:
                self.collect()
                try:
                    await self.finish()
                finally:
                    try:
                        await self.clean_up()
                    finally:
                        await self.release()
        if self.lease is not None and self.lease.lost is not None:  # heard as late as its checks: what failed says less
            self.result.infrastructure_error = self.lease.lost
        return self.result

    async def acquire(self, stack: contextlib.AsyncExitStack) -> None:
        """A fresh context in a pooled browser, with the test's request policy, credentials, masks and evidence."""
        run = self.test_run
        if not self.replaying:
            self.preparing = asyncio.create_task(_prepare_agent(self.tools.make_llm))
            self.preparing.add_done_callback(lambda task: task.cancelled() or task.exception())  # raised in drive()
        with self.phases("browser context (fresh, in a pooled browser; a launch when none is idle)"):
            emulation = emulation_for(run.spec, run.recording)  # a replay's: the recording's pages' own
            lease = self.lease = await stack.enter_async_context(
                self.tools.pool.lease(self._failed_start_try, emulation=emulation)
            )
        self.result.environment = lease.environment  # kept with its recording
        if (gap := environment_gap(run.recording, lease.environment)) is not None:
            run.emit(Observed(name=run.spec.name, kind="replay_environment", error=False, detail={"reason": gap}))
        if lease.launch_s:
            self.phases.part("of which launching the browser (its worker's first test only)", lease.launch_s)
        self.deadline = time.monotonic() + run.spec.timeout
        await self.policy.install(lease.context)
        await self.proving.install(lease.context)
        self.evidence.attach(lease.browser, lease.context)
        self.settler.attach(lease.context)
        self.sightings.attach(lease.context)
        DialogAnswerer(run.spec.name, run.spec.dialogs.prompt, run.emit, self._step_in_progress).attach(lease.context)
        if self.tools.browser.trace:
            self.trace = TestTrace(run.spec.name, with_screenshots=not run.secrets, emit=run.emit)
            await self.trace.start(lease.context)
        await self.sightings.installed()  # before the test's first page: a toast it shows at once is in the record

    async def drive(self) -> None:
        """The test's `before:` requests; then the agent (or the replay) on the context, from the saved state if any;
        then the state to keep, if asked."""
        if not await self.make_data():
            return
        run, lease = self.test_run, self.lease
        assert lease is not None
        if not self.replaying:
            await self.start_agent_session()
        if run.start_state is not None:
            await load_state(lease.context, run.start_state, run.allowed_hosts)
        await self.drive_test(lease)
        if run.keep_state is not None:  # before the history is published: the runner redacts what it holds
            run.keep_state(await read_state(lease.context))

    async def drive_test(self, lease: Lease) -> None:
        """A task: its recording replayed, or the agent."""
        if self.replaying:
            assert self.test_run.recording is not None
            page = next((p for p in lease.context.pages if not p.is_closed()), None) or await lease.context.new_page()
            self.final_page = await self.replay(self.test_run.recording, page, self.test_run.spec, self.result)
        else:
            await self.drive_agent(self.test_run.spec, self.test_run.start_url)

    async def make_data(self) -> bool:
        """The `before:` requests, once the browser is ready; the test from now on has the values they saved in place of
        its <var>s. False: one failed, and the test errors with it."""
        run = self.test_run
        if not run.spec.before:
            return True
        with self.phases("before: requests to the preview's API"):
            problem = await self.data.before()
        if problem is not None:
            self.result.infrastructure_error = problem
            return False
        spec, start_url = self.data.filled(run.spec), self.data.fill_text(run.start_url)
        self.test_run = dataclasses.replace(run, spec=spec, start_url=start_url)
        return True

    async def clean_up(self) -> None:
        """The `after:` requests, however the test ended (failed, errored, timed out, cancelled); one that fails is a
        warning on the test."""
        if not self.test_run.spec.after:
            return
        with self.phases("after: requests to the preview's API"):
            await self.data.after()
        self.result.after_failed = list(self.data.after_failed)

    async def start_agent_session(self) -> ContextSession:
        """browser-use's session on the test's context, with the masks and watchers it needs before its first picture."""
        lease = self.lease
        assert lease is not None
        if self.session is not None:
            return self.session
        if self.preparing is None:  # a replay handing a goal to the agent: not prepared while the browser started
            self.preparing = asyncio.create_task(_prepare_agent(self.tools.make_llm))
        with self.phases("importing browser-use, making the LLM client (what the browser's start did not hide)"):
            self._llm(await self.preparing)
        from preview_qa.agent.adapter.build import session_profile
        from preview_qa.agent.adapter.connect import hear_errors, start_session

        self.steps.attach(lease.context)  # where the agent's actions find their elements, for the export
        masking.guard(lease.context_id, self.mask)  # before browser-use takes its first screenshot
        with self.phases("browser-use session start"):
            where = (self.test_run.allowed_hosts, self.workdir, lease.cdp_url)
            profile = session_profile(self.tools.browser.headless, *where, self.test_run.spec.emulation)
            self.session = await start_session(lease, profile)
        hear_errors(self.session, self.evidence.browser_error)
        return self.session

    def collect(self) -> None:
        """What the run left, whatever stopped it: LLM faults and usage, the agent's history, the secrets stopped, the
        cause of an infrastructure failure."""
        result = self.result
        if self.recorder is not None:
            result.llm_faults = list(self.recorder.faults)
        result.visited = self.evidence.visits.urls  # kept with its recording: which pages it visits (run --impacted)
        if self.agent is not None:  # an agent run's, once built
            from preview_qa.agent.adapter.history import read_history

            read_history(self.agent, result, self.test_run.spec, self.test_run.secrets, self.test_run.emit, self.steps)
        if self.recorder is not None:  # our own count of every answer, never browser-use's (it drops invalid ones)
            result.usage = self.recorder.usage()
        result.secret_attempts = list(self.policy.attempts)
        for command in self.session.refused if self.session is not None else []:  # each refused, and not sent
            self.test_run.emit(
                Observed(name=self.test_run.spec.name, kind="out_of_context", error=True, detail={"command": command})
            )
        if result.infrastructure_error is None:
            result.infrastructure_error = self.evidence.unreachable(self.policy.navigations_blocked, result.done is None)

    async def finish(self) -> None:
        """Check expectations on the page the test ended on, then photograph it: both before its context closes. A
        cancelled run ends now."""
        lease, cancelled = self.lease, (task := asyncio.current_task()) is not None and task.cancelling() > 0
        if self.hooks is not None:  # the last step's picture, before settling and the checks move on
            await asyncio.shield(self.hooks.finish(shoot=lease is not None and not cancelled))
        if lease is None or cancelled:
            return
        page = await self.last_page(lease)
        if page is not None:
            await asyncio.shield(self._finish_on(page))
        self.trace_due = self.tools.browser.trace  # stopped once the run's facts are all in (release)

    async def release(self) -> None:
        """Let go of the page's watchers (what they saw goes into the result), the trace, the test's folder; announce the
        timings."""
        self.evidence.tell(self.result, self.policy.navigations_blocked)
        await self.proving.tell(self.result)
        if self.trace_due:  # written only when wanted, now that the run's facts are in
            write = self.test_run.trace_wanted(self.result)
            with self.phases("trace (stop, write the zip)" if write else "trace (stop; a passing run's is not written)"):
                await asyncio.shield(self.trace.stop(write))
        self.evidence.closing = True
        if self.lease is not None:
            self.evidence.detach(self.lease.browser)
        masking.release(self.mask)
        if self.mailbox is not None:
            await self.mailbox.close()
        await asyncio.to_thread(shutil.rmtree, self.workdir, ignore_errors=True)
        if self.recorder is not None and self.recorder.seconds:
            self.phases.part("of which waiting for the LLM", self.recorder.seconds)
        self.test_run.emit(self.phases.detail().observed(self.test_run.spec.name))

    async def last_page(self, lease: Lease) -> Page | None:
        """The page the test ended on: the agent's current tab, or where the replay ended."""
        return self.final_page if self.session is None else await agent_page(self.session, lease)

    def judged_at_end(self) -> bool:
        """Whether the final page's checks are judged: the agent reported, or the replay ran to its end."""
        result = self.result
        return (result.done is not None or result.execution is Execution.REPLAYED) and result.infrastructure_error is None

    def _llm(self, made: MeteredChat | None = None) -> RecordingLLM:
        """The test's LLM, built on first use (a replay that needs no verdict call never loads an LLM client), or from
        the client already `made`."""
        from preview_qa.agent.adapter.llm import RecordingLLM

        if self.recorder is None:
            made = made or self.tools.make_llm()
            self.recorder = RecordingLLM(
                made.chat,
                meter=made.meter,
                on_fault=self.evidence.llm_fault,
                on_answer=self.steps.heard,
                redactor=self.tools.redactor,
                vision=self.tools.vision,
                on_vision_off=self._vision_off,
            )
        return self.recorder

    def _vision_off(self, refusal: str) -> None:
        """The provider said the model reads no images: said in this test's events and once for the run."""
        run = self.test_run
        run.emit(Observed(name=run.spec.name, kind="vision_off", error=False, detail={"refusal": refusal}))
        run.warn(
            f"vision off: the model takes no images ({one_line(refusal, 200)}), so from test {run.spec.name!r} on no "
            "screenshot went to it; its tests were judged on the pages' text (--vision off says so from the start)"
        )

    async def drive_agent(self, spec: TestSpec, start_url: str | None) -> Agent:
        """browser-use's agent for `spec` on the test's session (opening `start_url` first, unless None: a goal starts on
        the page the test is on), run to its end or its max_steps; its steps numbered on from the test's."""
        from preview_qa.agent.adapter.build import build_agent
        from preview_qa.agent.adapter.history import AgentSteps

        run, lease, session = self.test_run, self.lease, self.session
        assert lease is not None and session is not None
        hooks = AgentSteps(spec, run.emit, self.result, self.steps, lease, self.phases, self.evidence, self._llm().usage)
        hooks.before_first_action = self.proving.before_first_action
        self.hooks = hooks
        with self.phases("agent set-up"):
            where = (session, self._llm(), self.workdir, self.steps, self.policy, hooks.on_new_step)
            self.agent = build_agent(spec, start_url, run.secrets, *where, self._read_mail if self.mailbox else None)
        on_start, on_end = self.trace.around_step(hooks.on_step_start, hooks.on_step_end)
        await self.agent.run(max_steps=spec.max_steps, on_step_start=on_start, on_step_end=on_end)
        return self.agent

    async def _read_mail(self) -> tuple[str, dict[str, str]]:
        """The agent's read_mail: the test's newest mail in words, its codes and link tokens secrets of the run from now
        on (redacted, masked, and in the LLM's requests as their placeholders), its event in the evidence."""
        assert self.mailbox is not None
        try:
            mail = await self.mailbox.newest()
        except CatcherError as e:
            return str(e), {}
        found = tokens(mail) if mail is not None else {}
        self.tools.redactor.add(found)
        if mail is not None:
            detail = {"address": self.mailbox.address, "subject": mail.subject, "from": mail.sender, "links": mail.links}
            self.test_run.emit(Observed(name=self.test_run.spec.name, kind="mail", error=False, detail=detail))
        return for_the_agent(mail, self.mailbox.address), found

    async def replay(self, recording: Recording, page: Page, spec: TestSpec, into: AgentRun, before: int = 0) -> Page | None:
        """Replay a recording from `page` into `into` (numbered on from `before`); a drift is announced with both pictures
        of its step; one LLM call judges the page when code alone cannot. Returns the page the replay ended on."""
        run, lease = self.test_run, self.lease
        assert lease is not None
        where = (lease.context, page, run.secrets, run.spec.name, run.emit)
        self.replayer = Replayer(*where, self.phases, self._shoot, ActionGuard(self.policy), self.settler.acted)
        self.replayer.acted = self.evidence.acted
        self.replayer.shot_at_end = run.spec.steps is None  # a test step's own picture is taken once its checks ran
        if (visual := self.visual) is not None and visual.visual.steps and run.spec.steps is None:
            self.replayer.on_step = lambda number, page: visual.take(page, str(number), SHOT_TIMEOUT_S)
        self.replayer.before_first_action = self.proving.before_first_action
        steps = recorded_steps(recording.history, recording.origin, run.origin)
        outcome = await self.replayer.run(steps, before, "step" if run.spec.steps is None else "agent step")
        into.steps = outcome.steps
        if (drift := outcome.drift) is not None:
            into.replay_error = drift.message
            shots = (recording.screenshots.get(drift.compare_step - before), drift.live_png)
            run.emit(ReplayDrifted(name=run.spec.name, message=drift.message, recorded_png=shots[0], live_png=shots[1]))
            # A proof judges the page the app showed instead, by the test's checks (verdict/proof.py's judge_replay)
            outcome.page = self.replayer.page if self.proving.judges_drift and not self.replayer.page.is_closed() else None
        if outcome.page is not None and replay_needs_llm_check(spec):
            from preview_qa.agent.adapter.build import report_model
            from preview_qa.agent.adapter.page_check import check_page_against_task

            with self.phases("page check (one LLM call)"):
                settled = await self._settle_step(outcome.page)
                if (busy := settled.busy_error()) is not None:  # no verdict, by code or model, on a half-done page
                    into.infrastructure_error = busy
                    return outcome.page
                into.done, usage = await check_page_against_task(
                    spec, outcome.page, self._llm(), report_model(spec.output_schema), self.tools.redactor, self._shoot
                )
            into.usage = usage
        return outcome.page

    async def _settle_step(self, page: Page) -> Settled:  # as an agent's step waits for its page (the same rule)
        return await self.settler.settle(page, SETTLE_S, restless_s=RESTLESS_S)

    async def _shoot(self, page: Page) -> bytes | None:
        return await page_screenshot(page, self.mask)

    async def _finish_on(self, page: Page) -> None:
        run, result = self.test_run, self.result
        result.final_url = page.url
        if self.judged_at_end():
            wait = check_wait(run.spec.expect, self.deadline - time.monotonic())
            try:
                with self.phases("settling the final page"):
                    settled = await settle(run.spec, page, self.settler, wait, run.emit)
                result.final_url = page.url  # where settling led: a bounce to the sign-in page is judged there
                # The checks wait `wait`, then say what they found: on a busy machine, until the final screenshot's turn
                cap = max(wait + CLEANUP_RESERVE_S / 2, self.deadline - time.monotonic() - SHOT_TIMEOUT_S)
                if (busy := settled.busy_error()) is not None:  # still at work at the bound: no verdict on a half-done page
                    result.infrastructure_error = busy
                else:
                    with self.phases("expectation checks"):  # one group in the trace, each check one Playwright call a frame
                        checks = check_settled_page(run.spec.expect, page, self.settler, settled, wait, self.sightings)
                        outcomes = await asyncio.wait_for(self.trace.grouped("expectation checks", checks), cap)
                        result.expectations = unmoved(outcomes, run.spec.expect.url, run.start_url, page.url)
                    result.expectations += await self._problem_checks(page)
            except TimeoutError:
                result.infrastructure_error = "could not check the final page: its checks were still running at the deadline"
            except Exception as e:
                result.infrastructure_error = f"could not check the final page: {type(e).__name__}: {error_line(e)}"
            for outcome in result.expectations:
                run.emit(Observed(name=run.spec.name, kind="expectation", error=not outcome.ok, detail=outcome.model_dump()))
        await ground_quotes(run.spec, result, page, self.sightings, self.tools.redactor.text)  # a stopped test's goals too
        if self.visual is not None and result.infrastructure_error is None:
            await self.visual.take(page, "final", SHOT_TIMEOUT_S)
        step = self.replayer.pictured_at_end if self.replayer is not None and page is self.replayer.page else None
        png: bytes | None = None
        with contextlib.suppress(Exception), self.phases("final screenshot"):
            png = await masking.screenshot(page, self.mask, timeout=SHOT_TIMEOUT_S * 1000)
            run.emit(FinalScreenshot(name=run.spec.name, png=png, step=step))
        if self.judged_at_end():
            await self._second_look(png)

    async def _problem_checks(self, page: Page) -> list[ExpectationOutcome]:
        """expect.console_errors and expect.requests on what the test's pages did until now; expect.links on the final
        page's links, each requested first (bounded by the test's deadline, less the final screenshot's time)."""
        run, result = self.test_run, self.result
        if run.spec.expect.links is not None:
            with self.phases("requesting the final page's links"):
                credentials = self.tools.browser.extra_headers
                result.links = await request_links(page, run.origin, credentials, self.deadline - SHOT_TIMEOUT_S)
        evidence = self.evidence
        return problem_outcomes(run.spec.expect, evidence.problems, evidence.problems_dropped, result.links)

    async def _second_look(self, final_png: bytes | None) -> None:
        """The judge's second look at a pass no page check of its own held (verdict/second_look.py), one LLM call
        with the final screenshot, counted in the test's usage and budget; skipped, and said, when the test's own
        checks decide."""
        from preview_qa.engine.pricing import budget_exceeded
        from preview_qa.verdict.second_look import checks_decide, looked_at
        from preview_qa.verdict.steps import decide_test

        spec, result = self.test_run.spec, self.result
        decision = decide_test(spec, result)
        quotes = looked_at(spec, decision, result.shown)
        if not quotes:
            result.second_look_skipped = checks_decide(spec, decision)
            return
        from preview_qa.agent.adapter.page_check import second_look

        llm = self._llm()
        before = llm.usage()
        with self.phases("second look at the quotes (one LLM call)"):
            result.second_look_asked = [quote for quote, _ in quotes]
            result.second_look = await second_look(spec, quotes, llm, final_png)
        result.usage, result.llm_faults = llm.usage(), list(llm.faults)
        result.second_look_usage = result.usage - before
        if result.infrastructure_error is None and (over := budget_exceeded(spec, result.usage)) is not None:
            result.infrastructure_error = over

    def _step_in_progress(self) -> int | None:
        """The step under way: the agent's (its record is made when it ends), or the replay's (None before it starts)."""
        return self.result.steps + 1 if not self.replaying else self.replayer.step if self.replayer is not None else None

    def _drive_limit(self) -> float:
        timeout = self.test_run.spec.timeout
        return timeout - min(CLEANUP_RESERVE_S, timeout / 5)

    def _stopped_by(self, error: Exception) -> str:
        """The test's infrastructure error for what stopped it."""
        if isinstance(error, BrowserStartError | StateError):
            return str(error)
        # Only our own deadline is the test timing out; a library's TimeoutError is a crash like any other.
        if isinstance(error, TimeoutError) and self.limit is not None and self.limit.expired():
            return f"timed out after {self.test_run.spec.timeout:g} s"
        return f"the agent or browser crashed: {type(error).__name__}: {error_line(error)}"

    def _failed_start_try(self, attempt: int, reason: str) -> None:
        """A retried browser start is evidence too, even when the retry works."""
        detail = {"try": attempt, "reason": reason}
        self.test_run.emit(Observed(name=self.test_run.spec.name, kind="browser_start_failed", error=True, detail=detail))


def with_inbox(run: AgentRequest) -> tuple[AgentRequest, Mailbox | None]:
    """With the manifest's inbox, this run's own address, written where the test says <inbox> (its task, goals and
    fill values) and where its recordings typed the address of the run they were recorded in; and its mailbox."""
    if run.inbox is None:
        return run, None
    spec, address = run.spec, new_address(run.spec.name, run.inbox.domain)
    task = spec.task.replace(INBOX, address) if spec.task is not None else None
    steps = [addressed(step, address) for step in spec.steps] if spec.steps is not None else None
    spec = spec.model_copy(update={"task": task, "steps": steps})

    def moved(recording: Recording) -> Recording:
        return dataclasses.replace(recording, history=readdressed(recording.history, address))  # type: ignore[arg-type]

    recording = moved(run.recording) if run.recording is not None else None
    goals = {i: moved(r) for i, r in run.step_recordings.items()}
    mailbox = Mailbox(address, catcher(run.inbox))
    return dataclasses.replace(run, spec=spec, recording=recording, step_recordings=goals), mailbox


async def _prepare_agent(make_llm: Callable[[], MeteredChat]) -> MeteredChat:
    """The agent's modules (browser-use's and the provider's SDK: about 1.6 s of CPU) imported, and the test's LLM client
    made, on a thread while the test's browser starts and its context is made, which is mostly Chromium's work: an agent
    test waits for the longer of the two, not for both in turn."""

    def prepare() -> MeteredChat:
        for name in AGENT_MODULES:  # connect's import also makes what each session's start would (prepare_sessions)
            importlib.import_module(name)
        return make_llm()

    return await asyncio.to_thread(prepare)


def check_wait(expect: Expectations, left_s: float) -> float:
    """How long the page checks (the test's, or a step's) may wait for their conditions: expect.timeout, but never past
    the test's own deadline (less the final screenshot and the description of what each check found)."""
    return max(0.0, min(expect.timeout, left_s - SHOT_TIMEOUT_S - CLEANUP_RESERVE_S / 2))
