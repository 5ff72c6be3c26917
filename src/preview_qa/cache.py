"""The replay cache: a passing test's action trace, filed under a hash of everything that defines the test."""

from __future__ import annotations

import hashlib
import json
from importlib.metadata import version
from pathlib import Path
from typing import Any

from preview_qa.events import AgentHistory, Event, TestFinished
from preview_qa.manifest import Manifest, TestSpec
from preview_qa.preview import origin_of
from preview_qa.providers import default_model
from preview_qa.reporters import Reporter
from preview_qa.reporters.files import write_atomic
from preview_qa.results import Status
from preview_qa.trace import Recording

CACHE_FORMAT = 1  # bump when what we store, or how we replay it, changes
RECORDING_PATHS = ("agent", "replay-fell-back")  # a replayed test's trace is already in the cache


class TraceCache:
    """Reads and writes `<folder>/<key>.json`; the key changes whenever the test, model or browser-use does."""

    def __init__(self, folder: Path, manifest: Manifest, provider: str, model: str | None):
        self.folder = folder
        self._defines = {"format": CACHE_FORMAT, "manifest_version": manifest.version, "provider": provider,
                         "model": default_model(provider, model), "browser_use": version("browser-use")}

    def key(self, spec: TestSpec) -> str:
        """sha256 of the test's definition; the name, budgets and timeouts do not change what the agent does."""
        test = spec.model_dump(mode="json", include={"task", "start", "expect", "output_schema", "allowed_domains",
                                                     "secrets"})
        if spec.use_state is not None:  # a trace recorded signed in needs the same start; other keys stay as they were
            test["use_state"] = spec.use_state
        blob = json.dumps({**self._defines, **test}, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(blob.encode()).hexdigest()

    def path(self, spec: TestSpec) -> Path:
        return self.folder / f"{self.key(spec)}.json"

    def load(self, spec: TestSpec) -> Recording | None:
        """The recording for this exact test definition, or None (missing, unreadable or from another format)."""
        try:
            entry = json.loads(self.path(spec).read_text(encoding="utf-8"))
            if entry.get("format") != CACHE_FORMAT or entry.get("key") != self.key(spec):
                return None
            return Recording(origin=str(entry["origin"]), history=dict(entry["history"]))
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None  # a damaged entry costs one agent run, never a wrong verdict

    def store(self, spec: TestSpec, origin: str, history: dict[str, Any]) -> None:
        entry = {"format": CACHE_FORMAT, "key": self.key(spec), "test": spec.name, "origin": origin, "history": history}
        write_atomic(self.path(spec), json.dumps(entry, ensure_ascii=False, default=str))


class CacheReporter(Reporter):
    """Files the action trace of every test that passed after a full agent run; the only writer of the cache folder.

    It reads the same AgentHistory event as the artifacts reporter, after the runner has replaced every secret value
    with its placeholder (and browser-use's own dump filtered the typed ones already), so no secret is stored."""

    def __init__(self, cache: TraceCache, manifest: Manifest, base_url: str):
        self.cache, self.origin = cache, origin_of(base_url)
        self._specs = {t.name: t for t in manifest.tests}
        self._histories: dict[str, dict[str, Any]] = {}

    def handle(self, event: Event) -> None:
        if isinstance(event, AgentHistory):
            self._histories[event.name] = event.history  # a fallback's agent run comes after its replay: latest wins
        elif isinstance(event, TestFinished):
            result, history = event.result, self._histories.pop(event.result.name, None)
            spec = self._specs.get(result.name)
            if result.status is Status.PASSED and result.path in RECORDING_PATHS and history and spec is not None:
                self.cache.store(spec, self.origin, history)
