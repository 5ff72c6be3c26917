"""Where an export's recording comes from: a results folder (the test's history.json, written for its last run) or the
replay cache (the recording a later run replays). Reads files only; the CLI writes the exported one."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from preview_qa.engine.preview import origin_of
from preview_qa.engine.replay_cache import RecordingCache
from preview_qa.errors import ExportError
from preview_qa.manifest.models import Manifest, TestSpec
from preview_qa.manifest.steps import StepKind
from preview_qa.reporters.output.files import RESULTS
from preview_qa.results import Execution, Status


@dataclass(frozen=True)
class Source:
    """A passing run's history (secrets as placeholders) and the preview origin it ran against; a test written as
    steps: each goal's own history, by test step."""

    history: dict[str, Any]
    origin: str
    goals: dict[int, dict[str, Any]] = field(default_factory=dict)


def find_test(manifest: Manifest, name: str) -> TestSpec:
    spec = next((t for t in manifest.tests if t.name == name), None)
    if spec is None:
        names = ", ".join(repr(t.name) for t in manifest.tests)
        raise ExportError(f"{manifest.path} has no test named {name!r}; its tests are {names}.")
    return spec


def from_results(folder: Path, spec: TestSpec) -> Source:
    """The test's run in a results folder (`run --out`): it must have passed, and by the agent (a replay writes no
    history of its own: export it from the cache)."""
    path = folder / RESULTS
    try:
        run = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ExportError(f"cannot read {path} ({type(e).__name__}); give the folder a `run --out` wrote.") from None
    test = next((t for t in run.get("tests") or [] if t.get("name") == spec.name), None)
    if test is None:
        raise ExportError(f"{path} has no result for {spec.name!r}; run the test first.")
    if test.get("status") != Status.PASSED:
        raise ExportError(f"{spec.name!r} {test.get('status')} in {path}: only a passing run is exported.")
    if spec.steps is not None:
        return _goals_from_results(folder, spec, test, origin_of(str(run.get("base_url") or "")))
    history = (test.get("artifacts") or {}).get("history")
    if not history:
        how = "was replayed from the cache" if test.get("path") == Execution.REPLAYED else "has no history.json"
        raise ExportError(f"{spec.name!r} {how} in {folder}; export it with --cache (the folder `run --cache` used).")
    return Source(_history(folder / str(history)), origin_of(str(run.get("base_url") or "")))


def _goals_from_results(folder: Path, spec: TestSpec, test: dict[str, Any], origin: str) -> Source:
    """A test written as steps: each goal's own history in the results folder; a goal its run replayed has none there."""
    files = {int(Path(p).name.split("-")[2]): p for p in (test.get("artifacts") or {}).get("step_histories") or []}
    goals = {}
    for index in _goal_steps(spec):
        if index not in files:
            raise ExportError(
                f"{spec.name!r}'s step {index} was replayed from the cache in {folder}; export it with --cache (the "
                "folder `run --cache` used)."
            )
        goals[index] = _history(folder / str(files[index]))
    return Source({}, origin, goals)


def _goal_steps(spec: TestSpec) -> list[int]:
    return [i for i, step in enumerate(spec.steps or [], start=1) if step.kind is StepKind.DO]


def from_cache(cache: RecordingCache, spec: TestSpec) -> Source:
    """The recording a run with the same test definition, provider and model would replay (a test written as steps:
    each goal's)."""
    if spec.steps is not None:
        goals = {index: cache.load(spec, step=index) for index in _goal_steps(spec)}
        missing = [index for index, found in goals.items() if found is None]
        if missing:
            raise ExportError(
                f"{cache.folder} holds no recording of {spec.name!r}'s step {missing[0]} for this test definition, "
                "provider and model; pass the --provider and --model the run used, or export from its results folder."
            )
        kept = {index: found for index, found in goals.items() if found is not None}
        origin = next(iter(kept.values())).origin if kept else ""
        return Source({}, origin, {index: found.history for index, found in kept.items()})
    recording = cache.load(spec)
    if recording is None:
        raise ExportError(
            f"{cache.folder} holds no recording of {spec.name!r} for this test definition, provider and "
            "model; pass the --provider and --model the run used, or export from its results folder."
        )
    return Source(recording.history, recording.origin)


def _history(path: Path) -> dict[str, Any]:
    try:
        history = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ExportError(f"cannot read {path} ({type(e).__name__}).") from None
    if not isinstance(history, dict):
        raise ExportError(f"{path} is not a browser-use history.")
    return history
