# Over 400 lines: one Runner holds the run's state (semaphore, retries, baseline, setup tests, saved logins, budget),
# and each of its steps is a short method; split across modules they would pass that state around.
"""Schedules the tests (concurrency, timeouts, setup tests, cancellation) and announces what happens; writes no files
itself (a saved login lives in the private StateStore until the run ends)."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Protocol
from urllib.parse import urlsplit

from preview_qa.config import RunConfig, TraceMode
from preview_qa.engine.agent_port import AgentFn, AgentRequest, Recorded, RecordedElsewhere, Recording, StepRecordings, replaying
from preview_qa.engine.healing import fall_back
from preview_qa.engine.preview import origin_of, target_url, wait_for_preview
from preview_qa.engine.proof import Prover
from preview_qa.engine.retries import RETRIED, combine, compared, repeated, test_budget_left, wants_retry
from preview_qa.engine.saved_state import BrowserState, StateStore
from preview_qa.engine.step_cache import steps_visited
from preview_qa.engine.visual import VISUAL_REPLAY, References, compared_visually, outcome, recorded, reference, wants_steps
from preview_qa.events import (
    AgentHistory,
    AttemptFinished,
    Event,
    Evidence,
    Observed,
    ReplayFellBack,
    RunFinished,
    RunStarted,
    RunTarget,
    RunWarning,
    TestFinished,
    TestStarted,
    attempt_label,
)
from preview_qa.lifecycle import within
from preview_qa.manifest.models import Manifest, TestSpec
from preview_qa.manifest.setup_tests import setup_of
from preview_qa.results import (
    Execution,
    PlannedRoute,
    PlanSummary,
    RunResult,
    Status,
    StopReason,
    TestResult,
    Usage,
    emulation_label,
)
from preview_qa.secrets.events import redacted
from preview_qa.secrets.redact import Redactor
from preview_qa.selection.route import Route
from preview_qa.selection.select import select
from preview_qa.verdict.agent_run import AgentRun
from preview_qa.verdict.blocked import protected_preview_line
from preview_qa.verdict.checks.problems import kept_problems
from preview_qa.verdict.decide import provider_outage, report_as_dict, secret_line
from preview_qa.verdict.final import Facts, Final, final_verdict
from preview_qa.verdict.second_look import look_line
from preview_qa.verdict.steps import fell_back_of, task_step

TEARDOWN_GRACE_S = 30.0  # past a test's own timeout, before the runner gives up on its teardown
PROVIDER_DOWN_AFTER = 3  # tests in a row left without an answer by the LLM provider: the rest are not started


def untested_routes(routes: list[Route] | None, mapped: int) -> PlanSummary | None:
    """--impacted's "changed routes with no test" for the PR comment, as `run --plan` lists them (without drafts), of
    the `mapped` routes the change maps to."""
    if routes is None:
        return None
    where = "no test starts on it or visits it: `preview-qa plan` drafts tests for it"
    return PlanSummary(routes=[PlannedRoute(route=r.shown, files=list(r.files), note=where) for r in routes], mapped=mapped)


def start_url(base_url: str, start: str) -> str:
    return start if "://" in start else base_url.rstrip("/") + start


def _no_baseline_for(spec: TestSpec) -> str | None:
    """Why the baseline cannot run the test, if it cannot: a saved login is the preview's (signed out there, a failure
    would wrongly excuse this one), and --baseline-url is the plain preview's, not an app's."""
    if spec.use_state is not None:
        return f"it starts from the preview's saved state '{spec.use_state}', which the baseline cannot use"
    if spec.app is not None:
        return f"it is for app '{spec.app}', and --baseline-url is the baseline of the tests without app:"
    return None


def allowed_hosts(base_url: str, spec: TestSpec) -> list[str]:
    hosts = [urlsplit(base_url).hostname or "", urlsplit(start_url(base_url, spec.start)).hostname or ""]
    return list(dict.fromkeys(h for h in [*hosts, *spec.allowed_domains] if h))


class Recordings(Protocol):
    """The replay cache's lookup: a test's recording on the preview (or on the baseline), if one is kept; or that it
    was recorded only under another device or locale."""

    def __call__(self, spec: TestSpec, target: RunTarget = RunTarget.PREVIEW) -> Recorded | RecordedElsewhere | None: ...


class Runner:
    """Runs a manifest's tests and passes every event, secrets redacted, to `publish`."""

    def __init__(
        self,
        manifest: Manifest,
        config: RunConfig,
        secrets: dict[str, dict[str, str]],
        agent: AgentFn,
        publish: Callable[[Event], None],
        redactor: Redactor,
        recordings: Recordings | None = None,
        browser_start_s: float = 0.0,
        references: References | None = None,
    ):
        self.manifest, self.config, self.secrets, self._agent = manifest, config, secrets, agent
        self._browser_start_s = browser_start_s  # the most `agent` may spend starting a browser, beyond the timeout
        self._recordings = recordings  # the replay cache's lookup; None = always run the agent
        # Shared with stderr and the agents: a saved login's cookie values join it as soon as they are read.
        self._redactor = redactor  # gathered once, by app.py
        self._publish_raw = publish
        self._finished: dict[str, TestResult] = {}
        self._provider_streak = 0
        self._provider_down: str | None = None  # once set, tests not yet started error at once with this reason
        self.selection = select(manifest, config, self._visited if recordings is not None else None)
        self._setup_of = setup_of(manifest.tests)  # test -> the test whose saved state it starts from
        self._done: dict[str, asyncio.Event] = {}  # set when the test has finished, for the tests waiting on it
        self._states = StateStore()
        self._kept: dict[str, BrowserState] = {}  # a save_state test's state from its latest attempt, until its verdict
        self._facts: dict[str, Facts] = {}  # what each test's latest attempt on the preview found, for its baseline run
        self._warnings: list[str] = []  # about the whole run (RunWarning), kept in results.json
        self._prover = Prover(agent, self.publish, redactor, config.cache, self._run_budget_spent) if config.prove else None
        # The recording each test's latest preview run replayed or made: --prove replays it mutated, and the baseline
        # of expect.visual replays the same steps
        self._recorded: dict[str, Recorded] = {}
        # expect.visual: the default branch's screenshots kept in the replay cache; each run's screenshots to compare
        self._references = references
        self._shots: dict[tuple[str, RunTarget], dict[str, bytes]] = {}

    def publish(self, event: Event) -> None:
        event = redacted(event, self._redactor)
        if isinstance(event, AgentHistory) and event.label != RunTarget.BASELINE:  # the latest attempt's, as the cache's
            spec = next(t for t in self.manifest.tests if t.name == event.name)
            self._recorded[event.name] = recorded(event, target_url(self.config, spec), self._recorded.get(event.name))
        self._publish_raw(event)

    async def run(self) -> RunResult:
        """Run everything; on cancellation stop the tests, close their browsers, and still return every result."""
        started, clock = datetime.now(UTC).isoformat(timespec="seconds"), time.monotonic()
        result = RunResult(
            manifest=self.manifest.path, base_url=self.config.previews, started_at=started, baseline_url=self.config.baseline_url
        )
        self.publish(
            RunStarted(
                manifest=self.manifest.path, base_url=self.config.previews, test_names=[t.name for t in self.selection.tests]
            )
        )
        self._done = {t.name: asyncio.Event() for t in self.selection.tests}
        for note in self.selection.notes:  # --impacted's: why every test runs, which ones have no recording
            self._warnings.append(note)
            self.publish(RunWarning(message=note))
        result.plan = untested_routes(self.selection.untested, self.selection.mapped)
        try:
            unreachable = await self._wait_for_preview()
            result.warnings = self._warnings
            if unreachable:
                result.stop_reason, result.notice = StopReason.PREVIEW_UNREACHABLE, f"preview unreachable: {unreachable}"
            else:
                semaphore = asyncio.Semaphore(max(1, self.config.concurrency))
                async with asyncio.TaskGroup() as group:
                    for spec in self.selection.tests:
                        group.create_task(self._one(spec, semaphore))
                result.baseline_error = await self._compare_with_baseline(semaphore)
                await self._compare_visually(semaphore)
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None:
                current.uncancel()
            result.stop_reason, result.notice = StopReason.CANCELLED, "cancelled"
        finally:
            self._states.close()  # the saved logins never outlive the run
        for spec in self.selection.tests:
            if spec.name not in self._finished:
                self._finish(self._unrun(spec, Status.ERRORED, result.notice or "the run ended before this test finished"))
        result.tests = [self._finished[t.name] for t in self.selection.tests]
        result.duration_s = round(time.monotonic() - clock, 2)
        self.publish(RunFinished(result=result))
        return result

    def _visited(self, spec: TestSpec) -> list[str] | None:
        """The pages the test's last passing recording visited (its paths on the preview), for --impacted; None when
        there is none under its device and locale."""
        assert self._recordings is not None
        found = self._recordings(spec)
        return found.pages() if isinstance(found, Recording) else steps_visited(spec, found) if spec.steps else None

    async def _wait_for_preview(self) -> str | None:
        """Why a preview the tests run on did not answer in time (the plain one, and each app's a test is for); a run
        whose every test is skipped runs on none, and waits for none."""
        running = [t for t in self.selection.tests if self.selection.skip_reason(t) is None]
        if self.config.wait_timeout <= 0 or not running:
            return None
        urls = dict.fromkeys([self.config.base_url, *(self.config.url_of(t.app) for t in running if t.app)])
        for url in (u for u in urls if u is not None):
            why = await wait_for_preview(url, self.config.wait_timeout, self.config.preview_headers, on_protected=self._protected)
            if why:
                return why
        return None

    def _protected(self, status: int) -> None:
        self._warn(protected_preview_line(status))

    def _warn(self, message: str) -> None:
        """A line about the whole run: in results.json's warnings, the console, the summary and the report."""
        self._warnings.append(message)
        self.publish(RunWarning(message=message))

    async def _one(self, spec: TestSpec, semaphore: asyncio.Semaphore) -> None:
        if spec.name in self._setup_of and not self.selection.skip_reason(spec):
            blocked = await self._wait_for_setup(spec)  # before taking a slot: the setup test may need it
            if blocked:
                self._finish(self._unrun(spec, Status.ERRORED, blocked))
                return
        async with semaphore:
            skip_reason = self.selection.skip_reason(spec)
            if skip_reason:
                self._finish(self._unrun(spec, Status.SKIPPED, skip_reason))
                return
            spent = self._run_budget_spent() or self._provider_down
            if spent:
                self._finish(self._unrun(spec, Status.ERRORED, spent))
                return
            spec = self._with_overrides(spec)
            self.publish(TestStarted(name=spec.name))
            self._finish(await self._proved(spec, await self._with_retries(spec)))

    async def _proved(self, spec: TestSpec, result: TestResult) -> TestResult:
        """With --prove, the result with its proof (engine/proof.py): in the test's own slot, after its verdict, which
        the proof never changes."""
        if self._prover is None:
            return result
        limit_s = self._browser_start_s + spec.timeout + TEARDOWN_GRACE_S
        request = self._request(spec, RunTarget.PREVIEW, None, self.publish)
        recorded = self._recorded.get(spec.name) or (StepRecordings() if spec.steps is not None else None)  # exact steps
        return await self._prover.prove(spec, result, recorded, request, limit_s)

    async def _with_retries(self, spec: TestSpec) -> TestResult:
        """Run the test; while it failed or errored and may be retried, run it again from scratch in a fresh browser.
        Each attempt's usage counts against the test's budget and the run's, and each attempt's evidence is labelled."""
        if self.config.repeat_each > 1:
            return await self._repeated(spec)
        attempts: list[TestResult] = []
        while True:
            label = attempt_label(len(attempts) + 1) if spec.retries else None
            budgeted = test_budget_left(spec, sum((a.usage for a in attempts), Usage())) or spec
            # Only the first attempt may replay a recorded agent_run: a retry is the agent's, from scratch.
            attempts.append(await self._run_once(budgeted, RunTarget.PREVIEW, label, replay=not attempts))
            if label is not None:
                self.publish(AttemptFinished(name=spec.name, label=label, result=attempts[-1]))
            if not self._retry_allowed(spec, attempts):
                return combine(attempts)

    async def _repeated(self, spec: TestSpec) -> TestResult:
        """--repeat-each N: the test N times, each run from scratch as its first attempt would run (none retried), each
        run's evidence labelled; the run's budget and a provider that is down stop the runs early."""
        runs: list[TestResult] = []
        for number in range(1, self.config.repeat_each + 1):
            if runs and (self._provider_down is not None or self._run_budget_spent(sum((r.usage for r in runs), Usage()))):
                break
            runs.append(await self._run_once(spec, RunTarget.PREVIEW, attempt_label(number), replay=True))
            self.publish(AttemptFinished(name=spec.name, label=attempt_label(number), result=runs[-1]))
        return repeated(runs)

    def _retry_allowed(self, spec: TestSpec, attempts: list[TestResult]) -> bool:
        """The test's own rule (reruns.wants_retry), unless the provider is down or the run's budget is spent."""
        if not wants_retry(spec, attempts) or self._provider_down is not None:
            return False
        return self._run_budget_spent(sum((a.usage for a in attempts), Usage())) is None

    async def _run_once(
        self, spec: TestSpec, target: RunTarget, label: str | None, replay: bool, recording: Recorded | None = None
    ) -> TestResult:
        """One run of the test on the preview or the baseline (replaying `recording`, if given), decided; its events
        carry `label`."""
        emit = self._labelled(label)
        clock = time.monotonic()
        recording = recording or (self._recording(spec, target, emit) if replay else None)
        agent_run = replayed = await self._attempt(spec, target, recording, emit)
        handover = fall_back(spec, replayed) if isinstance(recording, Recording) else None  # a step test heals per goal
        if handover is not None:  # a replay never fails a test on its own: the agent gets the whole test (and its timeout)
            why = ReplayFellBack(reason=handover.replay_verdict.reason, cause=handover.cause.value, why=handover.cause.words)
            emit(why.observed(spec.name))
            agent_run = await self._attempt(spec, target, None, emit)
            agent_run.execution, agent_run.usage = Execution.REPLAY_FELL_BACK, replayed.usage + agent_run.usage
        facts = Facts(
            spec,
            agent_run,
            replay=replayed if isinstance(recording, Recording) else None,
            fell_back=handover.cause if handover is not None else fell_back_of(agent_run),
            # the baseline's state is no one's to start from
            state_read=spec.name in self._kept if target == RunTarget.PREVIEW and spec.save_state is not None else None,
        )
        final = final_verdict(facts)
        if facts.state_read and final.verdict.status is Status.PASSED:
            self._save_state(spec)
        if target == RunTarget.PREVIEW:
            self._facts[spec.name] = facts  # the latest attempt's, which the baseline's outcome joins
            if self._prover is not None:
                self._prover.ran(spec, agent_run)
            if isinstance(recording, StepRecordings):  # the goals it replayed, and those its agent recorded meanwhile
                self._recorded[spec.name] = recording.joined(self._recorded.get(spec.name))
            elif recording is not None and handover is None:
                self._recorded[spec.name] = recording
        self._shots[(spec.name, target)] = agent_run.visual_shots
        self._note_provider(agent_run)
        return self._result(facts, final, time.monotonic() - clock, emit)

    def _result(self, facts: Facts, final: Final, duration_s: float, emit: Callable[[Event], None]) -> TestResult:
        """The run's result as the reporters read it, its verdict announced first."""
        spec, agent_run, verdict, decision = facts.spec, facts.run, final.verdict, final.decision
        emit(Observed(name=spec.name, kind="verdict", error=not verdict.status.is_green, detail=verdict.model_dump(mode="json")))
        problems, left_off = kept_problems(agent_run)
        return TestResult(
            name=spec.name,
            file=self.manifest.path,
            line=spec.line,
            status=verdict.status,
            reason=verdict.reason,
            causes=verdict.causes,
            duration_s=round(duration_s, 2),
            steps=agent_run.steps,
            execution=agent_run.execution,
            agent_report=report_as_dict(decision.report),
            expectations=decision.expectations,
            evidence=agent_run.evidence,
            usage=agent_run.usage,
            final_url=agent_run.final_url,
            replay_drift=final.drift,
            secrets_blocked=[secret_line(a) for a in agent_run.secret_attempts],
            healed=final.healed,
            fell_back=facts.fell_back,
            emulation=spec.emulation,
            step_results=decision.steps or [task_step(spec, agent_run, verdict, final.healed, duration_s, agent_run.usage)],
            quotes=decision.quotes,
            unverified=decision.unverified,
            addressed=decision.addressed,
            steered=decision.steered,
            checked=decision.checked,
            second_look=look_line(agent_run),
            problems=problems,
            problems_left_off=left_off,
            links=[link.path for link in agent_run.links or []],
            persona=spec.persona,
            after_failed=agent_run.after_failed,
        )

    def _recording(self, spec: TestSpec, target: RunTarget, emit: Callable[[Event], None]) -> Recorded | None:
        if self._recordings is None:
            return None
        found = self._recordings(spec) if target == RunTarget.PREVIEW else self._recordings(spec, target)
        if isinstance(found, RecordedElsewhere):
            now = emulation_label(spec.emulation)
            reason = f"recorded under {found.label}, not under this test's {now}: the agent runs it afresh"
            emit(Observed(name=spec.name, kind="recording_not_replayed", error=False, detail={"reason": reason}))
            return None
        return found

    def _labelled(self, label: str | None) -> Callable[[Event], None]:
        """`publish`, with the evidence of one labelled run (an attempt, the baseline run) marked as that run's."""
        if label is None:
            return self.publish
        return lambda event: self.publish(dataclasses.replace(event, label=label) if isinstance(event, Evidence) else event)

    async def _attempt(
        self, spec: TestSpec, target: RunTarget, recording: Recorded | None, emit: Callable[[Event], None]
    ) -> AgentRun:
        self._kept.pop(spec.name, None)
        try:
            return await within(
                self._agent(self._request(spec, target, recording, emit)),
                self._browser_start_s + spec.timeout + TEARDOWN_GRACE_S,
            )
        except TimeoutError:
            return AgentRun(infrastructure_error=f"timed out after {spec.timeout:g} s (and its teardown hung)")
        except Exception as e:
            return AgentRun(infrastructure_error=f"internal error: {type(e).__name__}: {e}")

    def _request(
        self, spec: TestSpec, target: RunTarget, recording: Recorded | None, emit: Callable[[Event], None]
    ) -> AgentRequest:
        """What the agent is asked for one run of the test; saved states are the preview's alone (the baseline's run
        starts from none and keeps none)."""
        base_url = target_url(self.config, spec, target)
        on_preview = target == RunTarget.PREVIEW
        request = AgentRequest(
            spec=spec,
            start_url=start_url(base_url, spec.start),
            origin=origin_of(base_url),
            allowed_hosts=allowed_hosts(base_url, spec),
            secrets=self.secrets.get(spec.name, {}),
            emit=emit,
            start_state=self._states.load(spec.use_state) if on_preview and spec.use_state is not None else None,
            keep_state=(lambda state: self._keep(spec, state)) if on_preview and spec.save_state is not None else None,
            log_requests=self.config.prove and on_preview,
            base_url=base_url,
            warn=self._warn,
            trace_wanted=self._trace_wanted(spec, target),
            inbox=self.manifest.inbox,
        )
        return replaying(request, recording)

    def _trace_wanted(self, spec: TestSpec, target: RunTarget) -> Callable[[AgentRun], bool]:
        """--trace retain-on-failure keeps the traces of the runs that failed or errored, so a run whose own verdict is
        a pass (judged from the facts its attempt is judged by, in _run_once) needs none written."""
        if self.config.trace is not TraceMode.RETAIN_ON_FAILURE:
            return lambda run: True

        def wanted(run: AgentRun) -> bool:
            replay = run if run.execution is Execution.REPLAYED else None
            state_read = spec.name in self._kept if target == RunTarget.PREVIEW and spec.save_state is not None else None
            facts = Facts(spec, run, replay=replay, fell_back=fell_back_of(run), state_read=state_read)
            return final_verdict(facts).verdict.status is not Status.PASSED

        return wanted

    async def _compare_with_baseline(self, semaphore: asyncio.Semaphore) -> str | None:
        """After the run, each test that ran and failed or errored runs once more on the baseline deployment, with the
        same manifest; passing tests are not re-run. None, or why the baseline could not be used."""
        failing = [
            t
            for t in self.selection.tests
            if self._finished[t.name].status in RETRIED and self._finished[t.name].execution is not Execution.NOT_RUN
        ]
        if self.config.baseline_url is None or not failing:
            return None
        unreachable = await wait_for_preview(self.config.baseline_url, self.config.wait_timeout, self.config.preview_headers)
        if unreachable:
            return f"--baseline-url is unreachable: {unreachable}"
        async with asyncio.TaskGroup() as group:
            for spec in failing:
                group.create_task(self._on_baseline(spec, semaphore))
        return None

    async def _on_baseline(self, spec: TestSpec, semaphore: asyncio.Semaphore) -> None:
        async with semaphore:
            # A saved login belongs to the preview's host: on the baseline the test would run signed out, and a
            # failure there would wrongly excuse this one.
            why_not = self._run_budget_spent() or self._provider_down or _no_baseline_for(spec)
            baseline = (
                self._unrun(spec, Status.ERRORED, why_not)
                if why_not
                else await self._run_once(self._with_overrides(spec), RunTarget.BASELINE, RunTarget.BASELINE, replay=True)
            )
            self.publish(AttemptFinished(name=spec.name, label=RunTarget.BASELINE, result=baseline))
            final = final_verdict(dataclasses.replace(self._facts[spec.name], baseline=baseline.status))
            self._finished[spec.name] = compared(self._finished[spec.name], baseline, final.regression)

    async def _compare_visually(self, semaphore: asyncio.Semaphore) -> None:
        """expect.visual: each test that passed is compared with the default branch, on the baseline (replaying the PR
        run's own recording, so that the steps line up) or with the reference the default branch's runs keep."""
        tests = [t for t in self.selection.tests if compared_visually(t, self._finished[t.name])]
        baseline, unreachable = self.config.baseline_url, None
        if baseline and tests:
            unreachable = await wait_for_preview(baseline, self.config.wait_timeout, self.config.preview_headers)
        async with asyncio.TaskGroup() as group:
            for spec in tests:
                group.create_task(self._visually(spec, semaphore, unreachable))

    async def _visually(self, spec: TestSpec, semaphore: asyncio.Semaphore, unreachable: str | None) -> None:
        after, spent = self._shots.get((spec.name, RunTarget.PREVIEW), {}), Usage()  # a replay that fell back costs tokens
        if wants_steps(spec, after) and spec.name in self._recorded:  # the agent's run: its steps, replayed, line up
            async with semaphore:
                run = await self._run_once(spec, RunTarget.PREVIEW, VISUAL_REPLAY, True, self._recorded[spec.name])
            self.publish(AttemptFinished(name=spec.name, label=VISUAL_REPLAY, result=run))
            after, spent = self._shots[(spec.name, RunTarget.PREVIEW)] or after, spent + run.usage
        if self.config.visual_references and after:  # only a run on the default branch keeps its screenshots
            self.publish(reference(spec, after))
        before, why_none = None, "no --baseline-url, and no reference from a run on the default branch in the replay cache"
        if self.config.baseline_url is None:
            before = self._references(spec) if self._references is not None else None
        elif why_not := self._no_visual_baseline(spec, unreachable):
            why_none = why_not
        else:
            async with semaphore:
                run = await self._run_once(
                    self._with_overrides(spec), RunTarget.BASELINE, RunTarget.BASELINE, True, self._recorded.get(spec.name)
                )
            self.publish(AttemptFinished(name=spec.name, label=RunTarget.BASELINE, result=run))
            before, why_none = self._shots.get((spec.name, RunTarget.BASELINE)) or None, f"on the baseline: {run.reason}"
            spent += run.usage
        accepted = self.config.accept_visual  # the pixels on a thread: the event loop drives the other tests' browsers
        result, events = await asyncio.to_thread(outcome, spec, self._finished[spec.name], before, after, accepted, why_none)
        for event in events:
            self.publish(event)
        self._finished[spec.name] = result.model_copy(update={"usage": result.usage + spent})

    def _no_visual_baseline(self, spec: TestSpec, unreachable: str | None) -> str | None:
        """Why the baseline cannot give `spec` its screenshots to compare with, if it cannot."""
        if unreachable:
            return f"--baseline-url is unreachable: {unreachable}"
        return _no_baseline_for(spec) or self._run_budget_spent() or self._provider_down

    async def _wait_for_setup(self, spec: TestSpec) -> str | None:
        """Wait until the test whose state `spec` starts from has finished; why `spec` cannot run, if it did not pass."""
        setup = self._setup_of[spec.name]
        await self._done[setup].wait()
        result = self._finished[setup]
        if result.status is not Status.PASSED:
            return f"setup test '{setup}' did not pass: {result.reason}"
        return None

    def _keep(self, spec: TestSpec, state: BrowserState) -> None:
        """A state the agent read: from now on its cookie values are redacted like secrets; it is saved if the test passes."""
        assert spec.save_state is not None
        self._redactor.add(state.secret_values(spec.save_state))
        self._kept[spec.name] = state

    def _save_state(self, spec: TestSpec) -> None:
        """Save a passing setup test's state for its dependents."""
        assert spec.save_state is not None
        self._states.save(spec.save_state, self._kept.pop(spec.name))

    def _with_overrides(self, spec: TestSpec) -> TestSpec:
        """The command line's per-test budgets and retries outrank the manifest's."""
        changes = {
            k: v
            for k, v in (
                ("max_tokens", self.config.max_tokens),
                ("max_cost_usd", self.config.max_cost_usd),
                ("llm_timeout", self.config.llm_timeout),
                ("retries", self.config.retries),
            )
            if v is not None
        }
        return spec.model_copy(update=changes) if changes else spec

    def _run_budget_spent(self, running: Usage | None = None) -> str | None:
        """Why no further test (or attempt) may start, if the run's own budget is used up by the tests finished so far
        (and the attempts of the test that asks)."""
        used = sum((t.usage for t in self._finished.values()), running or Usage())
        if self.config.run_max_tokens is not None and used.total_tokens >= self.config.run_max_tokens:
            return f"run budget exceeded: --run-max-tokens={self.config.run_max_tokens} (used {used.total_tokens})"
        if self.config.run_max_cost_usd is not None and (used.cost_usd or 0) >= self.config.run_max_cost_usd:
            return f"run budget exceeded: --run-max-cost-usd={self.config.run_max_cost_usd:g} (spent ${used.cost_usd:.4f})"
        return None

    def _note_provider(self, agent_run: AgentRun) -> None:
        """A circuit breaker: a provider that is down for the whole run must not cost every test its full timeout.
        Only a test in which no LLM call at all was answered counts; one answer shows the provider is up."""
        if agent_run.usage.llm_calls > len(agent_run.llm_faults):
            self._provider_streak = 0
            return
        outage = provider_outage(agent_run)
        if outage is None:  # no LLM call went wrong (e.g. the preview was unreachable): it says nothing either way
            return
        self._provider_streak += 1
        if self._provider_streak >= PROVIDER_DOWN_AFTER and self._provider_down is None:
            self._provider_down = (
                f"LLM provider down: {self._provider_streak} tests in a row got no answer "
                f"(last: {outage}); this test was not started"
            )

    def _unrun(self, spec: TestSpec, status: Status, reason: str) -> TestResult:
        return TestResult(
            name=spec.name,
            file=self.manifest.path,
            line=spec.line,
            status=status,
            reason=reason,
            execution=Execution.NOT_RUN,
            persona=spec.persona,
        )

    def _finish(self, result: TestResult) -> None:
        if result.name in self.selection.setups:
            result = result.model_copy(update={"setup_only": True})
        self._finished[result.name] = result
        self.publish(TestFinished(result=result))
        if result.name in self._done:
            self._done[result.name].set()
