"""`preview-qa merge`: several shards' results folders read back as one run, its tests in manifest order."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

from pydantic import ValidationError

from preview_qa.events import Event, RunFinished, RunStarted, TestFinished
from preview_qa.reporters.files import RESULTS, TESTS
from preview_qa.results import RunResult


class MergeError(ValueError):
    """A folder cannot be merged; the message says which and why."""


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
    tests = [t for run in runs for t in run.tests]
    seen: set[str] = set()
    for test in tests:
        if test.name in seen:
            raise MergeError(f"test {test.name!r} is in more than one shard's results; merge each shard's folder once.")
        seen.add(test.name)
    notices = list(dict.fromkeys(r.notice for r in runs if r.notice))
    baseline_errors = list(dict.fromkeys(r.baseline_error for r in runs if r.baseline_error))
    return RunResult(manifest=runs[0].manifest, base_url=runs[0].base_url, started_at=min(r.started_at for r in runs),
                     duration_s=max(r.duration_s for r in runs), tests=sorted(tests, key=lambda t: (t.file, t.line)),
                     notice="; ".join(notices) or None, baseline_url=runs[0].baseline_url,
                     baseline_error="; ".join(baseline_errors) or None)


def copy_artifacts(folders: list[Path], out: Path) -> None:
    """Each shard's per-test folders into `out`, so the paths in results.json still lead to the files."""
    for folder in folders:
        if (folder / TESTS).is_dir() and folder.resolve() != out.resolve():
            shutil.copytree(folder / TESTS, out / TESTS, dirs_exist_ok=True)


def replay(run: RunResult, publish: Callable[[Event], None]) -> None:
    """Announce a finished run to reporters as the runner would have: they render the merged run like any other."""
    publish(RunStarted(manifest=run.manifest, base_url=run.base_url, test_names=[t.name for t in run.tests]))
    for test in run.tests:
        publish(TestFinished(result=test))
    publish(RunFinished(result=run))
