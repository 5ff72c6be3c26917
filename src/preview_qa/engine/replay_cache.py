"""The replay cache: a passing test's recording (its actions, and the pages it visited), filed under a hash of everything
that defines the test; one made under a device (or locale) is filed apart, and replays only under the same one. A test
written as steps keeps each goal's recording apart, under a key of the steps up to it (engine/step_cache.py)."""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from importlib.metadata import version
from pathlib import Path
from typing import Any

from preview_qa.config import RunConfig
from preview_qa.engine.agent_port import Recorded, RecordedElsewhere, Recording, StepRecordings
from preview_qa.engine.preview import origin_of, target_url
from preview_qa.engine.step_cache import goal_definition, recordable_goals
from preview_qa.events import (
    AgentHistory,
    AttemptFinished,
    Event,
    PagesVisited,
    RunTarget,
    StepRecorded,
    TestFinished,
    VisualReference,
)
from preview_qa.manifest.models import Manifest, TestSpec
from preview_qa.manifest.steps import StepKind
from preview_qa.providers import default_model
from preview_qa.reporters import Reporter
from preview_qa.reporters.output.files import write_atomic
from preview_qa.results import Emulation, Execution, Status, StepExecution, TestResult, emulation_label

# bump when what we store, or how we replay it, changes (2: the pages a recording visited, #48; 3: a test written as steps,
# goal by goal, #47)
CACHE_FORMAT = 3
RECORDED_BY_AGENT = (Execution.AGENT, Execution.REPLAY_FELL_BACK)  # a replayed test's recording is already in the cache
RECORDED_BY_GOAL = (StepExecution.AGENT, StepExecution.HEALED)  # a goal's, likewise


class RecordingCache:
    """Reads and writes `<folder>/<key>.json`; the key changes whenever the test, model or browser-use does."""

    def __init__(self, folder: Path, manifest: Manifest, provider: str, model: str | None):
        self.folder = folder
        self._defines = {
            "format": CACHE_FORMAT,
            "manifest_version": manifest.version,
            "provider": provider,
            "model": default_model(provider, model),
            "browser_use": version("browser-use"),
        }

    def key(self, spec: TestSpec, target: RunTarget = RunTarget.PREVIEW, step: int | None = None) -> str:
        """sha256 of the test's definition; the name, budgets, timeouts and retries do not change what the agent does.
        The baseline's recordings get keys of their own: the preview's and the baseline's pages may differ. A test's
        emulation (device, viewport, locale...) follows as a suffix: the same test's recordings under other devices are
        found by the same start (see `lookup`), and a test without one keeps the key of earlier versions. A goal of a
        test written as steps (`step`) has its own key: see `goal_definition`."""
        emulation = spec.emulation
        if emulation is None:
            return self._definition(spec, target, step)
        options = json.dumps(emulation.model_dump(mode="json"), sort_keys=True, ensure_ascii=False)
        return f"{self._definition(spec, target, step)}.{hashlib.sha256(options.encode()).hexdigest()[:16]}"

    def _definition(self, spec: TestSpec, target: RunTarget, step: int | None = None) -> str:
        test = spec.model_dump(
            mode="json",
            include={"task", "start", "expect", "output_schema", "allowed_domains", "secrets"},
            exclude={"expect": {"timeout", "visual"}},  # neither changes what the agent does
        )
        if step is not None:
            test = goal_definition(spec, step)
        if spec.use_state is not None:  # a recording made signed in needs the same start; other keys stay as they were
            test["use_state"] = spec.use_state
        if spec.persona is not None:  # each persona's run of a test is recorded and replayed on its own
            test["persona"] = spec.persona
        where = {} if target == RunTarget.PREVIEW else {"target": target}  # the preview's keys are those of earlier versions
        blob = json.dumps({**self._defines, **test, **where}, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(blob.encode()).hexdigest()

    def path(self, spec: TestSpec, target: RunTarget = RunTarget.PREVIEW, step: int | None = None) -> Path:
        return self.folder / f"{self.key(spec, target, step)}.json"

    def load(self, spec: TestSpec, target: RunTarget = RunTarget.PREVIEW, step: int | None = None) -> Recording | None:
        """The recording for this exact test definition (or of its goal at `step`), or None (missing, unreadable or
        from another format)."""
        try:
            entry = json.loads(self.path(spec, target, step).read_text(encoding="utf-8"))
            if entry.get("format") != CACHE_FORMAT or entry.get("key") != self.key(spec, target, step):
                return None
            screenshots = {int(step): base64.b64decode(png) for step, png in (entry.get("screenshots") or {}).items()}
            seen = entry.get("environment")  # an entry of earlier versions has none: the replay says so
            environment = None if seen is None else Emulation.model_validate(seen)
            visited = [str(url) for url in entry["visited"]]
            return Recording(str(entry["origin"]), dict(entry["history"]), screenshots, environment, visited)
        except (OSError, ValueError, KeyError, TypeError, AttributeError, binascii.Error):  # ValidationError too
            return None  # a damaged entry costs one agent run, never a wrong verdict

    def lookup(self, spec: TestSpec, target: RunTarget = RunTarget.PREVIEW) -> Recorded | RecordedElsewhere | None:
        """The runner's lookup: the recording for this test (a step test's: its goals') under its own device and
        locale; else, when the same test was recorded under other ones, which (the run says why the agent runs); else
        None."""
        goals = [None] if spec.steps is None else [i for i, s in enumerate(spec.steps, start=1) if s.kind is StepKind.DO]
        found = {step: self.load(spec, target, step) for step in goals}
        if spec.steps is None and found[None] is not None:
            return found[None]
        if spec.steps is not None and any(found.values()):
            return StepRecordings({step: r for step, r in found.items() if step is not None and r is not None})
        for step in goals:
            own = self.path(spec, target, step)
            for other in sorted(self.folder.glob(f"{self._definition(spec, target, step)}*.json")):
                if other != own:
                    return RecordedElsewhere(_recorded_under(other))
        return StepRecordings() if spec.steps is not None else None

    def store(
        self,
        spec: TestSpec,
        origin: str,
        history: dict[str, Any],
        target: RunTarget = RunTarget.PREVIEW,
        screenshots: dict[int, bytes] | None = None,
        environment: Emulation | None = None,
        visited: list[str] | None = None,
        step: int | None = None,
    ) -> None:
        """File a passing run (or one goal's, at `step`): its history, what its pages saw (a replay runs in the same),
        the pages it loaded (which routes it visits, for `run --impacted`; a goal's: its whole test's) and, to show
        beside a later replay that drifts, each step's page as seen."""
        entry = {
            "format": CACHE_FORMAT,
            "key": self.key(spec, target, step),
            "test": spec.name,
            "step": step,
            "origin": origin,
            "emulation": None if spec.emulation is None else spec.emulation.model_dump(mode="json"),
            "environment": None if environment is None else environment.model_dump(mode="json"),
            "history": history,
            "visited": visited or [],
            "screenshots": {str(step): base64.b64encode(png).decode() for step, png in (screenshots or {}).items()},
        }
        write_atomic(self.path(spec, target, step), json.dumps(entry, ensure_ascii=False, default=str))

    def reference_path(self, spec: TestSpec) -> Path:
        """expect.visual's reference: named apart from the recordings (their lookup globs `<key>*.json`)."""
        return self.folder / f"visual-{self.key(spec)}.json"

    def reference(self, spec: TestSpec) -> dict[str, bytes] | None:
        """The default branch's last passing screenshots of this test, taken with the same mask and page size; or None."""
        try:
            entry = json.loads(self.reference_path(spec).read_text(encoding="utf-8"))
            if entry.get("format") != CACHE_FORMAT or entry.get("visual") != _shot_options(spec):
                return None
            return {str(step): base64.b64decode(png) for step, png in dict(entry["screenshots"]).items()}
        except (OSError, ValueError, KeyError, TypeError, AttributeError, binascii.Error):
            return None  # a damaged reference is no reference: the run says the test was not compared

    def store_reference(self, spec: TestSpec, shots: dict[str, bytes]) -> None:
        entry = {
            "format": CACHE_FORMAT,
            "test": spec.name,
            "visual": _shot_options(spec),
            "screenshots": {step: base64.b64encode(png).decode() for step, png in shots.items()},
        }
        write_atomic(self.reference_path(spec), json.dumps(entry, ensure_ascii=False))


class CacheReporter(Reporter):
    """Files the recording of every test that passed after a full agent run; the only writer of the cache folder.

    It reads the same AgentHistory event as the artifacts reporter, after the runner has replaced every secret value
    with its placeholder (and browser-use's own dump filtered the typed ones already), so no secret is stored."""

    def __init__(
        self,
        cache: RecordingCache,
        manifest: Manifest,
        config: RunConfig,
        keep_fall_backs: bool = True,
    ):
        self.cache, self.config = cache, config
        self.keep_fall_backs = keep_fall_backs  # config.fall_back_recordings_kept: off in a pull request's run
        self._specs = {t.name: t for t in manifest.tests}
        self._histories: dict[tuple[str, str, int | None], AgentHistory] = {}  # a goal's by its test step
        self._seen: dict[tuple[str, str], dict[int, bytes]] = {}
        self._visited: dict[tuple[str, str], list[str]] = {}  # a test written as steps: all its steps' pages

    def handle(self, event: Event) -> None:
        if isinstance(event, PagesVisited):
            self._visited[(event.name, _target(event.label))] = list(event.urls)
        elif isinstance(event, StepRecorded) and event.before_png:  # only agent steps carry it, never a replay's
            self._seen.setdefault((event.name, _target(event.label)), {})[event.number] = event.before_png
        elif isinstance(event, AgentHistory):
            # A fallback's agent run comes after its replay, a retry after the attempt it replaces: latest wins.
            self._histories[(event.name, _target(event.label), event.step)] = event
        elif isinstance(event, TestFinished):
            self._store(event.result, RunTarget.PREVIEW)
        elif isinstance(event, VisualReference) and event.name in self._specs:  # sent only on the default branch
            self.cache.store_reference(self._specs[event.name], dict(event.shots))
        elif isinstance(event, AttemptFinished) and event.label == RunTarget.BASELINE:
            self._store(event.result, RunTarget.BASELINE)

    def _store(self, result: TestResult, target: RunTarget) -> None:
        histories = {k[2]: self._histories.pop(k) for k in [k for k in self._histories if k[:2] == (result.name, target)]}
        seen = self._seen.pop((result.name, target), {})
        visited = self._visited.pop((result.name, target), [])
        spec = self._specs.get(result.name)
        if spec is not None and spec.steps is not None:
            self._store_goals(spec, result, target, histories, seen, visited)
            return
        run = histories.get(None)
        if result.execution is Execution.REPLAY_FELL_BACK and not self.keep_fall_backs:
            return  # the recording that passed on the default branch stays: a PR's drift may be its regression
        if result.status is Status.PASSED and result.execution in RECORDED_BY_AGENT and run and spec is not None:
            self.cache.store(spec, self._origin(spec, target), run.history, target, seen, run.environment, run.visited)

    def _store_goals(
        self,
        spec: TestSpec,
        result: TestResult,
        target: RunTarget,
        histories: dict[int | None, AgentHistory],
        seen: dict[int, bytes],
        visited: list[str],
    ) -> None:
        """Each goal the agent carried out whose checks held (or, without checks of its own, a later step's did, or the
        test passed): so a test that failed at step 3 keeps steps 1 and 2. A goal healed in a pull request's run does
        not replace the default branch's recording, as for a task."""
        for index in recordable_goals(spec, result.step_results, result.status is Status.PASSED):
            step, run = result.step_results[index - 1], histories.get(index)
            if run is None or step.execution not in RECORDED_BY_GOAL or step.agent_steps is None:
                continue
            if step.execution is StepExecution.HEALED and not self.keep_fall_backs:
                continue
            first, last = step.agent_steps
            pictures = {n - run.before: png for n, png in seen.items() if first <= n <= last}
            self.cache.store(spec, self._origin(spec, target), run.history, target, pictures, run.environment, visited, index)

    def _origin(self, spec: TestSpec, target: RunTarget) -> str:
        """The origin the test's run was on (its app's preview, or the baseline's), which its recording is made relative to."""
        return origin_of(target_url(self.config, spec, target))


def _shot_options(spec: TestSpec) -> dict[str, Any]:
    """What changes the pixels of expect.visual's screenshots: a reference taken otherwise is not compared."""
    visual = spec.expect.visual
    return {} if visual is None else {"mask": visual.mask, "full_page": visual.full_page}


def _recorded_under(path: Path) -> str:
    """What a recording was made under, in words (an entry of earlier versions has no emulation: the desktop)."""
    try:
        emulation = json.loads(path.read_text(encoding="utf-8")).get("emulation")
        return emulation_label(None if emulation is None else Emulation.model_validate(emulation))
    except (OSError, ValueError, AttributeError):
        return "device options that could not be read"


def _target(label: str | None) -> RunTarget:
    return RunTarget.BASELINE if label == RunTarget.BASELINE else RunTarget.PREVIEW
