"""Where each output lives under the results folder, and how files are written so a crash never leaves half a file."""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
import unicodedata
from pathlib import Path
from typing import Any

from preview_qa.events import RunTarget, attempt_label
from preview_qa.reporters.output.steps import in_words, steps_of
from preview_qa.reporters.output.visual import with_visual_files
from preview_qa.results import MailRead, RunResult, TestResult

RESULTS = "results.json"
JUNIT = "junit.xml"
REPORT = "report.html"
TESTS = "tests"
EXPLORE = "explore"  # `run --explore`: the exploration's findings.md, results.json and its own runs' folders
FINDINGS = "findings.md"  # in `explore`'s results folder (and `run --explore`'s explore/)
DRIFT_RECORDED = "replay-drift-recorded.png"  # the step's page when it was recorded ...
DRIFT_LIVE = "replay-drift-live.png"  # ... and the same step's page when the replay stopped matching it
EVENTS = "events.jsonl"  # in each test's folder
TRACE = "trace.zip"  # Playwright's trace of the test's run (--trace): `playwright show-trace trace.zip`
CRASH_LOG = "internal-error.log"  # our own crash's traceback, in the results folder (else the temp folder)
SLUG_LIMIT = 60


def workspace_relative(file: str, workspace: Path) -> str:
    """A manifest path as the repository knows it (relative to the workspace), which annotations and JUnit readers need;
    a path outside the workspace stays as it was given."""
    if not file:
        return ""
    try:
        return Path(file).resolve().relative_to(workspace.resolve()).as_posix()
    except ValueError:
        return Path(file).as_posix()


def safe_name(name: str) -> str:
    """A folder name for any test name (unicode, slashes, '..', 500 characters): readable, unique, portable."""
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^A-Za-z0-9]+", "-", ascii_name).strip("-").lower()[:SLUG_LIMIT].strip("-") or "test"
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{slug}-{digest}"


def test_dir(name: str) -> str:
    """The test's artifact folder, relative to the results folder."""
    return f"{TESTS}/{safe_name(name)}"


def step_screenshot(number: int) -> str:
    """The file name of the screenshot taken after agent step `number`."""
    return f"step-{number:02d}.png"


def form_screenshot(number: int) -> str:
    """The file name of the screenshot of step `number`'s filled-in form, taken just before it was submitted."""
    return f"step-{number:02d}-form.png"


def test_step_screenshot(index: int) -> str:
    """The file name of test step `index`'s page once its checks ran (a test written as steps; not an agent step's)."""
    return f"test-step-{index}.png"


def step_history(index: int) -> str:
    """The file name of a goal's own recording: the agent's history of test step `index`."""
    return f"test-step-{index}-history.json"


def step_screenshots(folder: Path, suffix: str = "") -> list[Path]:
    """The step screenshots whose names end in `suffix` (a regular expression), in step order (step-100 after step-99),
    a step's form before the page after it."""
    pattern = re.compile(rf"step-(\d+)({suffix})\.png")
    found = [(int(m.group(1)), not m.group(2), p) for p in folder.glob("step-*.png") if (m := pattern.fullmatch(p.name))]
    return [p for *_, p in sorted(found)]


def artifacts_of(out: Path, name: str, label: str | None = None) -> dict[str, str | list[str]]:
    """What exists on disk for the test (or one labelled run of it: an attempt, the baseline), as paths relative to
    the results folder: a function of (out, name, label) alone, so every reporter finds the same files without
    another one telling it."""
    return _files_in(out, f"{test_dir(name)}/{label}" if label else test_dir(name))


def last_run_dir(out: Path, test: TestResult) -> str:
    """The folder of the test's last run, relative to `out`: every attempt of a test that may be retried has its own
    (also a first one that passed), else the test's folder is its only run's."""
    labelled = f"{test_dir(test.name)}/{attempt_label(test.shown_attempt or test.attempts)}"
    return labelled if (out / labelled).is_dir() else test_dir(test.name)


def read_events(out: Path, test: TestResult) -> list[dict[str, Any]]:
    """The events.jsonl of the test's last run under `out` (if there is one), skipping a line a crash cut short."""
    path = out / last_run_dir(out, test) / EVENTS
    if not path.is_file():
        return []
    lines = []
    for text in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            line = json.loads(text)
        except ValueError:
            continue
        if isinstance(line, dict):
            lines.append(line)
    return lines


def _files_in(out: Path, rel: str) -> dict[str, str | list[str]]:
    folder = out / rel
    found: dict[str, str | list[str]] = {}
    if not folder.is_dir():
        return found
    for key, shots in (("screenshots", step_screenshots(folder)), ("form_screenshots", step_screenshots(folder, "-form"))):
        if shots:
            found[key] = [f"{rel}/{s.name}" for s in shots]
    histories = sorted(folder.glob("test-step-*-history.json"), key=lambda p: int(p.name.split("-")[2]))
    if histories:
        found["step_histories"] = [f"{rel}/{h.name}" for h in histories]
    for key, filename in (
        ("final_screenshot", "final.png"),
        ("events", EVENTS),
        ("history", "history.json"),
        ("animation", "run.gif"),
        ("replay_drift_recorded", DRIFT_RECORDED),
        ("replay_drift_live", DRIFT_LIVE),
        ("trace", TRACE),
    ):
        if (folder / filename).exists():
            found[key] = f"{rel}/{filename}"
    return found


def with_artifacts(out: Path, run: RunResult) -> RunResult:
    """A copy of the run whose tests list their files under `out`; the event's own result is left as it is."""
    return run.model_copy(update={"tests": [with_test_artifacts(out, t) for t in run.tests]})


def with_test_artifacts(out: Path, test: TestResult) -> TestResult:
    """A copy of the test with each of its runs' files: its last run's are its own, the earlier attempts' and the
    baseline run's are beside their outcomes."""
    earlier = [
        a.model_copy(update={"artifacts": artifacts_of(out, test.name, attempt_label(a.attempt or n))})
        for n, a in enumerate(test.earlier_attempts, start=1)
    ]
    baseline = (
        test.baseline.model_copy(update={"artifacts": artifacts_of(out, test.name, RunTarget.BASELINE)})
        if test.baseline is not None
        else None
    )
    folder = last_run_dir(out, test)
    events = read_events(out, test)
    steps = in_words(steps_of(events))
    for step in steps:
        shot = f"{folder}/{step_screenshot(step.number)}"
        step.screenshot = shot if (out / shot).is_file() else None
    test_steps = [s.model_copy(update={"screenshot": _step_shot(out, folder, test, s.index)}) for s in test.step_results]
    return test.model_copy(
        update={
            "artifacts": _files_in(out, folder),
            "earlier_attempts": earlier,
            "baseline": baseline,
            "steps_in_words": steps or test.steps_in_words,
            "visual": with_visual_files(out, test_dir(test.name), test.visual),
            "step_results": test_steps,
            "mails": [_mail(e) for e in events if e.get("type") == "mail"] or test.mails,
        }
    )


def _mail(event: dict[str, Any]) -> MailRead:
    links = event.get("links")
    return MailRead(
        address=str(event.get("address") or ""),
        subject=str(event.get("subject") or ""),
        sender=str(event.get("from") or ""),
        links=[str(link) for link in links] if isinstance(links, list) else [],
        received=str(event["received"]) if event.get("received") else None,
    )


def _step_shot(out: Path, folder: str, test: TestResult, index: int) -> str | None:
    """Test step `index`'s picture: its own (a test written as steps), or a task's final page."""
    own = f"{folder}/{test_step_screenshot(index)}"
    final = f"{folder}/final.png"
    return own if (out / own).is_file() else final if not test.written_as_steps and (out / final).is_file() else None


def write_atomic(path: Path, data: bytes | str) -> None:
    """Write to a temporary file beside `path`, then rename it into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        # mkstemp makes the file 0600; a container action running as root would leave it unreadable to upload steps.
        os.fchmod(fd, 0o644)
        with os.fdopen(fd, "wb") as f:
            f.write(payload)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_crash_log(trace: str, out: Path | None) -> Path:
    """Our own crash's traceback, in the results folder (else the temp folder): where it is (OSError if it could not
    be written)."""
    log = (out or Path(tempfile.gettempdir())) / CRASH_LOG
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(trace, encoding="utf-8")
    return log
