"""`preview-qa merge`: several shards' results folders read back as one run, its tests in manifest order."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

from pydantic import ValidationError

from preview_qa.errors import MergeError
from preview_qa.events import Event, RunFinished, RunStarted, TestFinished
from preview_qa.reporters.output.files import EXPLORE, RESULTS, test_dir
from preview_qa.results import RunResult, StopReason, TestResult


def load_run(folder: Path) -> RunResult:
    path = folder / RESULTS
    try:
        return RunResult.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except FileNotFoundError:
        raise MergeError(f"{folder} has no {RESULTS}; pass the folders that `preview-qa run --out` wrote.") from None
    except (ValueError, ValidationError) as e:
        raise MergeError(f"{path} is not a preview-qa {RESULTS}: {str(e).splitlines()[0]}") from None


def merge_runs(runs: list[RunResult]) -> RunResult:
    """One run: every shard's tests in manifest order; it took as long as the slowest shard (they run side by side)."""
    tests = _each_once([t for run in runs for t in run.tests])
    notices = list(dict.fromkeys(r.notice for r in runs if r.notice))
    baseline_errors = list(dict.fromkeys(r.baseline_error for r in runs if r.baseline_error))
    explored = [r.explore for r in runs if r.explore is not None]
    if len(explored) > 1:  # `run --explore` refuses --shard: two explorations are two runs of the whole job
        raise MergeError("more than one of the folders holds an exploration (run --explore); merge one of them at most.")
    return RunResult(
        manifest=runs[0].manifest,
        base_url=runs[0].base_url,
        started_at=min(r.started_at for r in runs),
        duration_s=max(r.duration_s for r in runs),
        tests=sorted(tests, key=lambda t: (t.file, t.line)),
        stop_reason=StopReason.merged([r.stop_reason for r in runs]),
        notice="; ".join(notices) or None,
        baseline_url=runs[0].baseline_url,
        baseline_error="; ".join(baseline_errors) or None,
        explore=explored[0] if explored else None,  # `--fail-on findings` holds on the merged run as on its own
    )


def _each_once(tests: list[TestResult]) -> list[TestResult]:
    """Each test once. A setup test also runs in every other shard that needs its login: the shard it belongs to
    reports it; if that shard is missing, the worst of its other runs does (a login that broke anywhere shows)."""
    by_name: dict[str, list[TestResult]] = {}
    for test in tests:
        by_name.setdefault(test.name, []).append(test)
    chosen = []
    for name, copies in by_name.items():
        own = [t for t in copies if not t.setup_only]
        if len(own) > 1:
            raise MergeError(f"test {name!r} is in more than one shard's results; merge each shard's folder once.")
        chosen.append(own[0] if own else max(copies, key=lambda t: t.status.rank))
    return chosen


def copy_artifacts(shards: list[tuple[Path, RunResult]], merged: RunResult, out: Path) -> None:
    """The folder of each merged test, from the shard whose result was kept, into `out`, so the paths in results.json
    still lead to that run's files."""
    kept = {id(t) for t in merged.tests}
    for folder, run in shards:
        if folder.resolve() == out.resolve():
            continue
        if run.explore is not None and (folder / EXPLORE).is_dir():  # its findings and its runs, where results.json says
            shutil.copytree(folder / EXPLORE, out / EXPLORE, dirs_exist_ok=True)
        for test in run.tests:
            if id(test) in kept and (folder / test_dir(test.name)).is_dir():
                shutil.copytree(folder / test_dir(test.name), out / test_dir(test.name), dirs_exist_ok=True)


def announce(run: RunResult, publish: Callable[[Event], None]) -> None:
    """Announce a finished run to reporters as the runner would have: they render the merged run like any other."""
    publish(RunStarted(manifest=run.manifest, base_url=run.base_url, test_names=[t.name for t in run.tests]))
    for test in run.tests:
        publish(TestFinished(result=test))
    publish(RunFinished(result=run))
