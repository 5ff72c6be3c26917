"""Replays a recording without the agent, through Playwright alone: every recorded action is matched to its live
element, run and checked; the first one that cannot be replayed ends the replay and is named, never skipped.

No browser-use session is started for a replay (its session start and its capture of the whole page before every
action were most of a replayed test's time). An action runs on the element found by `recorded.find_element`: a click
at the element's centre whatever covers it, as browser-use clicks; text is set with Playwright's `fill` (one input
event, as Playwright tests type), not key by key as browser-use types: on a busy 2-core machine typing took over a
second per field. An app that reacts to key presses only then fails to go on, and the replay drifts or its checks fail:
either way the agent runs the test. Every step starts on the page the recording's did (`same_place`), and the last recorded step
is the agent's `done`, so a replay ends where the recording ended, on the recorded origins only."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from preview_qa.agent.evidence.action_names import NAME_LIMIT
from preview_qa.agent.evidence.timing import Phases
from preview_qa.agent.guards.network import ActionGuard
from preview_qa.agent.guards.typed_into import focused_origin
from preview_qa.agent.replay.actions import ON_ELEMENT, page_action
from preview_qa.agent.replay.locate import NO_NAMES, LiveMatch, find_live, locator_facts
from preview_qa.agent.replay.recording import RecordedAction, RecordedStep, same_place
from preview_qa.events import StepRecorded
from preview_qa.manifest.models import SECRET_TAG
from preview_qa.results import error_line, one_line
from preview_qa.secrets.totp import typed_value

if TYPE_CHECKING:
    from playwright.async_api import BrowserContext, ElementHandle, Page


SETTLE_S = 3.0  # how long a replay waits for a page still rendering (or navigating to) what the recording found at once
POLL_S = 0.1
NAVIGATES = frozenset({"click", "navigate", "go_back", "send_keys"})  # actions after which a page may be loading


@dataclass(frozen=True)
class Drift:
    """Where the live app stopped matching the recording: `message` names the step, the action and what went wrong."""

    step: int
    message: str  # "step 3: input 'Walk the dog' into textbox 'New todo': element not found"
    live_png: bytes | None
    compare_step: int  # the recorded step whose starting page the live picture is to be compared with


@dataclass
class ReplayOutcome:
    steps: int = 0  # recorded agent steps replayed (the start navigation is step 0 and not counted, as for the agent)
    drift: Drift | None = None
    page: Page | None = None  # the tab the replay ended on


class _Drifted(Exception):
    def __init__(
        self,
        step: RecordedStep,
        action: RecordedAction | None,
        problem: str,
        live_png: bytes | None = None,
        compare: RecordedStep | None = None,
    ):
        what = action.describe() if action is not None else "the page"
        super().__init__(f"step {step.number}: {what}: {problem}")
        self.step, self.live_png, self.compare = step, live_png, compare or step


@dataclass
class _Found:
    live: LiveMatch
    facts: dict[str, Any]  # what a step's record says of the element (agent/adapter/step_watcher.py's element_facts, and more)

    @property
    def element(self) -> ElementHandle:
        return self.live.element


class Replayer:
    """Runs recorded steps in a test's browser context and announces each as a StepRecorded event; `shoot` takes a
    page's (masked) screenshot; `acted` hears each action after the start navigation, with its live element, before
    it runs; `acting` is told as any action starts, the start navigation included: settling follows what it causes."""

    def __init__(
        self,
        context: BrowserContext,
        page: Page,
        secrets: dict[str, str],
        test: str,
        emit: Callable[[StepRecorded], None],
        phases: Phases,
        shoot: Callable[[Page], Awaitable[bytes | None]],
        guard: ActionGuard,
        acting: Callable[[], None] = lambda: None,
    ):
        self.context, self.page, self.secrets, self.test = context, page, secrets, test
        self.emit, self.phases, self.shoot, self.guard = emit, phases, shoot, guard
        self.acted: Callable[[dict[str, Any], dict[str, Any] | None], None] = lambda action, element: None
        self.acting = acting  # told before each action runs: settling follows what it causes
        self.on_step: Callable[[int, Page], Awaitable[None]] | None = None  # after each step's actions (expect.visual)
        # Told once, as the first action after the start navigation is about to run, its element found: the start page
        # has rendered that far, and nothing waits longer for it (--prove)
        self.before_first_action: Callable[[Page], Awaitable[None]] | None = None
        self.step: int | None = None  # the recorded step under way (0: the start navigation), for a dialog's event

    async def run(self, steps: list[RecordedStep], before: int = 0, word: str = "step") -> ReplayOutcome:
        """Replay `steps`, numbered on from `before` (a goal's after its test's earlier agent steps); a drift's message
        names the step with `word` ("agent step 5" in a test written as steps)."""
        steps = [dataclasses.replace(s, number=s.number + before) for s in steps]
        outcome = await self._run(steps)
        if outcome.drift is not None and word != "step":
            message = word + outcome.drift.message.removeprefix("step")
            outcome.drift = dataclasses.replace(outcome.drift, message=message)
        return outcome

    async def _run(self, steps: list[RecordedStep]) -> ReplayOutcome:
        outcome = ReplayOutcome()
        previous: tuple[RecordedStep, RecordedAction] | None = None  # the last action run: it led to the next step's page
        for position, step in enumerate(steps):
            later = steps[position + 1] if position + 1 < len(steps) else None
            self.step = step.number
            try:
                with self.phases(f"step {step.number} (replay)" if step.number else "start navigation (replay)"):
                    await self._arrive(step, previous)
                    ran = await self._step(step, later)
            except _Drifted as drift:
                outcome.drift = Drift(drift.step.number, str(drift), drift.live_png, drift.compare.number)
                return outcome
            except Exception as e:  # a replay that cannot go on for any reason is incomplete, never partly passed
                outcome.drift = Drift(
                    step.number,
                    f"step {step.number}: the replay broke off: {type(e).__name__}: {error_line(e)}",
                    await self._screenshot(),
                    step.number,
                )
                return outcome
            previous = ran or previous
            outcome.steps += int(step.number > 0)
        self.step = None  # the checks' dialogs belong to no step
        outcome.page = self.page
        return outcome

    async def _arrive(self, step: RecordedStep, previous: tuple[RecordedStep, RecordedAction] | None) -> None:
        """Wait until the page is where the recording's was when this step began: the check that navigation happened."""
        deadline = time.monotonic() + SETTLE_S
        while not same_place(step.url, self.page.url):
            if time.monotonic() > deadline:
                problem = f"the page went to {self.page.url}, the recording went to {step.url}"
                named, action = previous if previous is not None else (step, None)
                raise _Drifted(named, action, problem, await self._screenshot(), compare=step)
            await asyncio.sleep(POLL_S)

    async def _step(self, step: RecordedStep, later: RecordedStep | None) -> tuple[RecordedStep, RecordedAction] | None:
        """Run the step's page actions; announce the step with a picture of the page as it left it."""
        done: list[dict[str, Any]] = []
        elements: list[dict[str, Any] | None] = []  # per action: the live element's role and name (as for agent steps)
        last: RecordedAction | None = None
        try:
            for action in step.actions:
                if action.skip is not None:
                    done.append({action.name: {**action.params, "replay": action.skip}})
                    elements.append(None)
                    continue
                found = await self._find(step, action) if action.needs_element else None
                try:
                    if step.number > 0 and (look := self.before_first_action) is not None:
                        self.before_first_action = None
                        await look(self.page)
                    await self._check(step, action, found)
                    done.append({action.name: dict(action.params)})
                    elements.append(found.facts if found is not None else None)
                    last = action
                    if step.number > 0:
                        self.acted({action.name: action.params}, found.facts if found is not None else None)
                    await self._act(step, action, found, later)
                except _Drifted:
                    raise
                except Exception as e:
                    raise _Drifted(step, action, error_line(e), await self._screenshot()) from e
                finally:
                    if found is not None:
                        await found.live.dispose()
        except _Drifted as drift:
            self._announce(step, done, elements, str(drift), None)
            raise
        if last is None:
            if step.number > 0:
                self._announce(step, done, elements, None, None)
            return None
        if last.name in NAVIGATES:  # the picture shows where the step led, not a frame between two documents
            with contextlib.suppress(Exception):
                await self.page.wait_for_load_state("load", timeout=SETTLE_S * 1000)
        if step.number > 0:
            if self.on_step is not None:
                await self.on_step(step.number, self.page)
            self._announce(step, done, elements, None, await self._screenshot())
        return step, last

    async def _check(self, step: RecordedStep, action: RecordedAction, found: _Found | None) -> None:
        """Refuse, as for the agent's own actions, one that would carry a secret off."""
        refused = await self.guard.refusal({action.name: action.params}, lambda: self._typed_into(found))
        if refused is not None:
            raise _Drifted(step, action, refused)

    async def _typed_into(self, found: _Found | None) -> str:
        """The URL of the document typed text goes into: the found element's frame (maybe another host's iframe), or
        the focused element's origin; '' if unknown (refused then)."""
        with contextlib.suppress(Exception):
            if found is None:
                return await self._focused()
            frame = await found.element.owner_frame()
            return frame.url if frame else ""
        return ""

    async def _focused(self) -> str:
        cdp = await self.context.new_cdp_session(self.page)
        try:
            return await focused_origin(lambda method, params: cdp.send(method, params))
        finally:
            await cdp.detach()

    async def _act(self, step: RecordedStep, action: RecordedAction, found: _Found | None, later: RecordedStep | None) -> None:
        """One action on the live page, by the table in actions.py (which says where it differs from browser-use's)."""
        self.acting()
        if found is not None:
            on_element = ON_ELEMENT.get(action.name)
            if on_element is not None:
                return await on_element(self, step, action, found.element, later)
        else:
            on_page = page_action(action)
            if on_page is not None:
                return await on_page(self, step, action, later)
        raise _Drifted(step, action, "the replay cannot run this action (only the agent can)")

    async def click(self, click: Callable[[], Awaitable[None]], later: RecordedStep | None) -> None:
        """A click; like browser-use, the replay follows a tab it opened. The recording says whether one opened: the
        next step saw more tabs than are open now."""
        before = list(self.context.pages)
        await click()
        if later is None or len(later.tabs) <= len(before):
            return
        deadline = time.monotonic() + SETTLE_S
        while len(self.context.pages) <= len(before) and time.monotonic() < deadline:
            await asyncio.sleep(POLL_S / 2)
        opened = [p for p in self.context.pages if p not in before]
        if opened:
            self.page = opened[0]

    def tab(self, step: RecordedStep, action: RecordedAction) -> Page:
        """The live tab in the recorded tab's place: tabs open in the same order on a replay, their ids differ."""
        wanted = str(action.params.get("tab_id", ""))[-4:]
        position = next((i for i, t in enumerate(step.tabs) if t.tab_id == wanted), None)
        pages = self.context.pages
        if position is None or position >= len(pages):
            raise _Drifted(step, action, f"tab not found ({len(pages)} open)")
        if not same_place(step.tabs[position].url, pages[position].url):
            raise _Drifted(
                step, action, f"tab {position + 1} shows {pages[position].url}, the recording's showed {step.tabs[position].url}"
            )
        return pages[position]

    def real_text(self, step: RecordedStep, action: RecordedAction, text: str) -> str:
        """The text with each secret's placeholder (<secret>name</secret>, as recorded) replaced by its value."""
        missing = [name for name in SECRET_TAG.findall(text) if name not in self.secrets]
        if missing:
            raise _Drifted(step, action, f"the secret {missing[0]!r} is not set in this run")
        return SECRET_TAG.sub(lambda m: typed_value(m.group(1), self.secrets[m.group(1)]), text)

    async def _find(self, step: RecordedStep, action: RecordedAction) -> _Found:
        """The live element the action acts on, waiting a moment for a page that is still rendering; with its role and
        name (as agent steps name theirs) and how the export's locator finds it (agent/replay/locate.py)."""
        if action.element is None:
            raise _Drifted(step, action, "the recording holds no element for it", await self._screenshot())
        deadline = time.monotonic() + SETTLE_S
        while True:
            match = await find_live(self.page, action.element)
            if isinstance(match, LiveMatch):
                tag = str(action.element.get("node_name") or "").lower()
                facts = {
                    "index": action.params.get("index"),
                    "role": match.role or tag,
                    "name": one_line(match.name or "", NAME_LIMIT),
                    "tag": tag,
                    "locator": await locator_facts(match.element, action.element),
                }
                return _Found(match, facts)
            if match == NO_NAMES or time.monotonic() > deadline:
                raise _Drifted(step, action, match, await self._screenshot())
            await asyncio.sleep(POLL_S)

    async def _screenshot(self) -> bytes | None:
        return await self.shoot(self.page)

    def _announce(
        self,
        step: RecordedStep,
        actions: list[dict[str, Any]],
        elements: list[dict[str, Any] | None],
        error: str | None,
        png: bytes | None,
    ) -> None:
        self.emit(
            StepRecorded(
                name=self.test,
                number=step.number,
                goal=step.goal,
                actions=actions,
                elements=elements,
                url=self.page.url,
                error=error,
                screenshot_png=png,
            )
        )
