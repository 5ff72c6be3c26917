"""The replay cache: a passing test's recording (its actions), filed under a hash of everything that defines the test;
one made under a device (or locale) is filed apart, and replays only under the same one."""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from importlib.metadata import version
from pathlib import Path
from typing import Any

from preview_qa.engine.agent_port import RecordedElsewhere, Recording
from preview_qa.engine.preview import origin_of
from preview_qa.events import AgentHistory, AttemptFinished, Event, RunTarget, StepRecorded, TestFinished, VisualReference
from preview_qa.manifest.models import Manifest, TestSpec
from preview_qa.providers import default_model
from preview_qa.reporters import Reporter
from preview_qa.reporters.output.files import write_atomic
from preview_qa.results import Emulation, Execution, Status, TestResult, emulation_label

CACHE_FORMAT = 2  # bump when what we store, or how we replay it, changes (2: the pages a recording visited, #48)
RECORDED_BY_AGENT = (Execution.AGENT, Execution.REPLAY_FELL_BACK)  # a replayed test's recording is already in the cache


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

    def key(self, spec: TestSpec, target: RunTarget = RunTarget.PREVIEW) -> str:
        """sha256 of the test's definition; the name, budgets, timeouts and retries do not change what the agent does.
        The baseline's recordings get keys of their own: the preview's and the baseline's pages may differ. A test's
        emulation (device, viewport, locale...) follows as a suffix: the same test's recordings under other devices are
        found by the same start (see `lookup`), and a test without one keeps the key of earlier versions."""
        emulation = spec.emulation
        if emulation is None:
            return self._definition(spec, target)
        options = json.dumps(emulation.model_dump(mode="json"), sort_keys=True, ensure_ascii=False)
        return f"{self._definition(spec, target)}.{hashlib.sha256(options.encode()).hexdigest()[:16]}"

    def _definition(self, spec: TestSpec, target: RunTarget) -> str:
        test = spec.model_dump(
            mode="json",
            include={"task", "start", "expect", "output_schema", "allowed_domains", "secrets"},
            exclude={"expect": {"timeout", "visual"}},  # neither changes what the agent does
        )
        if spec.use_state is not None:  # a recording made signed in needs the same start; other keys stay as they were
            test["use_state"] = spec.use_state
        where = {} if target == RunTarget.PREVIEW else {"target": target}  # the preview's keys are those of earlier versions
        blob = json.dumps({**self._defines, **test, **where}, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(blob.encode()).hexdigest()

    def path(self, spec: TestSpec, target: RunTarget = RunTarget.PREVIEW) -> Path:
        return self.folder / f"{self.key(spec, target)}.json"

    def load(self, spec: TestSpec, target: RunTarget = RunTarget.PREVIEW) -> Recording | None:
        """The recording for this exact test definition, or None (missing, unreadable or from another format)."""
        try:
            entry = json.loads(self.path(spec, target).read_text(encoding="utf-8"))
            if entry.get("format") != CACHE_FORMAT or entry.get("key") != self.key(spec, target):
                return None
            screenshots = {int(step): base64.b64decode(png) for step, png in (entry.get("screenshots") or {}).items()}
            seen = entry.get("environment")  # an entry of earlier versions has none: the replay says so
            environment = None if seen is None else Emulation.model_validate(seen)
            visited = [str(url) for url in entry["visited"]]
            return Recording(str(entry["origin"]), dict(entry["history"]), screenshots, environment, visited)
        except (OSError, ValueError, KeyError, TypeError, AttributeError, binascii.Error):  # ValidationError too
            return None  # a damaged entry costs one agent run, never a wrong verdict

    def lookup(self, spec: TestSpec, target: RunTarget = RunTarget.PREVIEW) -> Recording | RecordedElsewhere | None:
        """The runner's lookup: the recording for this test under its own device and locale; else, when the same test
        was recorded under other ones, which (the run says why the agent runs); else None."""
        found = self.load(spec, target)
        if found is not None:
            return found
        own = self.path(spec, target)
        for other in sorted(self.folder.glob(f"{self._definition(spec, target)}*.json")):
            if other != own:
                return RecordedElsewhere(_recorded_under(other))
        return None

    def store(
        self,
        spec: TestSpec,
        origin: str,
        history: dict[str, Any],
        target: RunTarget = RunTarget.PREVIEW,
        screenshots: dict[int, bytes] | None = None,
        environment: Emulation | None = None,
        visited: list[str] | None = None,
    ) -> None:
        """File a passing run: its history, what its pages saw (a replay runs in the same), the pages it loaded (which
        routes it visits, for `run --impacted`) and, to show beside a later replay that drifts, each step's page as seen."""
        entry = {
            "format": CACHE_FORMAT,
            "key": self.key(spec, target),
            "test": spec.name,
            "origin": origin,
            "emulation": None if spec.emulation is None else spec.emulation.model_dump(mode="json"),
            "environment": None if environment is None else environment.model_dump(mode="json"),
            "history": history,
            "visited": visited or [],
            "screenshots": {str(step): base64.b64encode(png).decode() for step, png in (screenshots or {}).items()},
        }
        write_atomic(self.path(spec, target), json.dumps(entry, ensure_ascii=False, default=str))

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
        base_url: str,
        baseline_url: str | None = None,
        keep_fall_backs: bool = True,
    ):
        self.cache = cache
        self.keep_fall_backs = keep_fall_backs  # config.fall_back_recordings_kept: off in a pull request's run
        self.origins = {RunTarget.PREVIEW: origin_of(base_url), RunTarget.BASELINE: origin_of(baseline_url or base_url)}
        self._specs = {t.name: t for t in manifest.tests}
        self._histories: dict[tuple[str, str], AgentHistory] = {}
        self._seen: dict[tuple[str, str], dict[int, bytes]] = {}

    def handle(self, event: Event) -> None:
        if isinstance(event, StepRecorded) and event.before_png:  # only agent steps carry it, never a replay's
            self._seen.setdefault((event.name, _target(event.label)), {})[event.number] = event.before_png
        elif isinstance(event, AgentHistory):
            # A fallback's agent run comes after its replay, a retry after the attempt it replaces: latest wins.
            self._histories[(event.name, _target(event.label))] = event
        elif isinstance(event, TestFinished):
            self._store(event.result, RunTarget.PREVIEW)
        elif isinstance(event, VisualReference) and event.name in self._specs:  # sent only on the default branch
            self.cache.store_reference(self._specs[event.name], dict(event.shots))
        elif isinstance(event, AttemptFinished) and event.label == RunTarget.BASELINE:
            self._store(event.result, RunTarget.BASELINE)

    def _store(self, result: TestResult, target: RunTarget) -> None:
        run = self._histories.pop((result.name, target), None)
        seen = self._seen.pop((result.name, target), {})
        spec = self._specs.get(result.name)
        if result.execution is Execution.REPLAY_FELL_BACK and not self.keep_fall_backs:
            return  # the recording that passed on the default branch stays: a PR's drift may be its regression
        if result.status is Status.PASSED and result.execution in RECORDED_BY_AGENT and run and spec is not None:
            self.cache.store(spec, self.origins[target], run.history, target, seen, run.environment, run.visited)


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
