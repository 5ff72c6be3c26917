"""Per-test evidence (screenshots, run.gif, events.jsonl, history.json) and the run's results.json, written as they arrive."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from preview_qa.config import TraceMode
from preview_qa.events import (
    AgentHistory,
    AttemptFinished,
    Event,
    ExploreFinished,
    FinalScreenshot,
    Observed,
    ReplayDrifted,
    RunFinished,
    RunStarted,
    StepRecorded,
    TestFinished,
    TestStepEnded,
    TraceRecorded,
    VisualCompared,
)
from preview_qa.reporters import Reporter
from preview_qa.reporters.output.files import (
    DRIFT_LIVE,
    DRIFT_RECORDED,
    EVENTS,
    EXPLORE,
    RESULTS,
    TRACE,
    form_screenshot,
    step_history,
    step_screenshot,
    step_screenshots,
    test_dir,
    test_step_screenshot,
    with_artifacts,
    with_test_artifacts,
    write_atomic,
)
from preview_qa.reporters.output.film_strip import with_film_strip
from preview_qa.reporters.output.images import animation, shrink_screenshot
from preview_qa.reporters.output.visual import visual_images
from preview_qa.results import ProofVerdict, RunResult, Status, TestResult

log = logging.getLogger(__name__)
# 2: a test's agent_verdict is called agent_report; 3: waited_s is the wait, timeout_s the budget; 4: steps_in_words;
# 5: healed, totals.healed; 6: emulation; 7: stop_reason, how the run ended; 8: fell_back, totals.fell_back, healed only
# for a page that changed; 9: proof (--prove), totals.vacuous; visual, visual_accepted, totals.changed (expect.visual);
# 10: step_results (a test's test steps; a task's one), beside `steps`, its agent steps
# 11: quotes (the agent's, looked up on the pages), unverified, totals.unverified; 12: path `exact` (exact steps alone)
# 13: addressed (page text the agent said addressed it), steered, checked; quotes[].in_instruction
# 14: problems (kind, page, target, status, message, resource_type; at most 50), problems_left_off, links (expect.links)
# 15: explore (`run --explore`: the exploration's result, as explore's own results.json), null without it
# 16: persona (a run of a test with `as:`), after_failed (its after: requests that failed: a warning)
# 17: mails (the mails a test read from its inbox: address, subject, sender, links); passes, pass_rate, shown_attempt
# (--repeat-each)
SCHEMA_VERSION = 17


class ArtifactsReporter(Reporter):
    """Owns the results folder. Text is written at once; image work (shrinking, the GIF) runs on one writer thread,
    in arrival order, so the event loop that drives the browsers never waits for Pillow."""

    def __init__(self, out: Path, trace: TraceMode = TraceMode.RETAIN_ON_FAILURE):
        self.out = out
        self.trace = trace
        # held until the run they belong to has its status; a zip of None: recorded, not written (its run's own verdict passed)
        self._traces: dict[tuple[str, str | None], TraceRecorded] = {}
        # each run's pictures and when they were taken, the film strip of its trace should it be kept (film_strip.py)
        self._pictures: dict[tuple[str, str | None], list[tuple[float, bytes]]] = {}
        self._run: RunResult | None = None
        self._done: RunResult | None = None  # as RunFinished gave it, for `run --explore` to add its findings to
        self._finished: list[TestResult] = []
        self._writer: ThreadPoolExecutor | None = None
        self._final_is_a_step: set[Path] = set()  # folders whose final.png is also the last step's picture (a replay's)

    def handle(self, event: Event) -> None:
        if self.trace is not TraceMode.OFF:
            self._picture(event)
        if isinstance(event, RunStarted):
            self.out.mkdir(parents=True, exist_ok=True)
            self._run = RunResult(
                manifest=event.manifest,
                base_url=event.base_url,
                started_at=datetime.fromtimestamp(event.at, UTC).isoformat(timespec="seconds"),
            )
            self._write_results(self._run)
        elif isinstance(event, StepRecorded):
            self._step(event)
        elif isinstance(event, Observed):
            self._log(self._dir(event.name, event.label), event.kind, event.error, event.at, event.detail)
        elif isinstance(event, FinalScreenshot):  # a replay's last step's picture too: the same page, shrunk once
            folder = self._dir(event.name, event.label)
            also = [folder / step_screenshot(event.step)] if event.step is not None else []
            self._in_background(_save_screenshot, folder / "final.png", event.png, *also)
            if also:
                self._final_is_a_step.add(folder)
        elif isinstance(event, ReplayDrifted):
            folder = self._dir(event.name, event.label)
            self._log(folder, "replay_drifted", False, event.at, {"message": event.message})
            for filename, png in ((DRIFT_RECORDED, event.recorded_png), (DRIFT_LIVE, event.live_png)):
                if png:
                    self._in_background(_save_screenshot, folder / filename, png)
        elif isinstance(event, AgentHistory):  # a goal's own, in a test written as steps
            write_atomic(
                self._dir(event.name, event.label) / ("history.json" if event.step is None else step_history(event.step)),
                json.dumps(event.history, indent=1, default=str, ensure_ascii=False),
            )
        elif isinstance(event, TestStepEnded) and event.png:
            self._in_background(
                _save_screenshot, self._dir(event.name, event.label) / test_step_screenshot(event.index), event.png
            )
        elif isinstance(event, VisualCompared):  # full size, as compared: no secret in them (masked in the pixels)
            for path, png in visual_images(test_dir(event.name), event):
                self._in_background(write_atomic, self.out / path, png)
        elif isinstance(event, TraceRecorded):
            self._traces[(event.name, event.label)] = event
        elif isinstance(event, AttemptFinished):
            self._keep_traces(event.name, event.label, event.result.status)
            folder = self._dir(event.name, event.label)
            self._in_background(_animate, folder, folder not in self._final_is_a_step)
        elif isinstance(event, TestFinished):
            for name, label in [k for k in self._traces if k[0] == event.result.name]:
                self._keep_traces(name, label, event.result.status)
            for key in [k for k in self._pictures if k[0] == event.result.name]:  # a run that recorded no trace
                del self._pictures[key]
            self._finished.append(event.result)
            # After the test's screenshots (same thread, in order): its animation, then results.json listing it.
            snapshot = [t.model_copy(deep=True) for t in self._finished]
            self._in_background(self._finish_test, event.result.name, snapshot)
        elif isinstance(event, RunFinished):
            self.flush()  # the reporters after this one list the files on disk (files.artifacts_of)
            self._done = with_artifacts(self.out, event.result)
            self._write_results(self._done)
        elif isinstance(event, ExploreFinished):
            self._explored(event)

    def finish(self) -> None:
        self.flush()

    def _explored(self, event: ExploreFinished) -> None:
        """`run --explore`: its files in explore/, its result in results.json."""
        from preview_qa.reporters.explore import write_files

        write_files(event.explore, self.out / EXPLORE)
        if self._done is not None:
            self._write_results(self._done.model_copy(update={"explore": event.explore}))

    def flush(self) -> None:
        """Wait until every queued image is on disk."""
        if self._writer is not None:
            self._writer.shutdown(wait=True)
            self._writer = None

    def _step(self, event: StepRecorded) -> None:
        folder = self._dir(event.name, event.label)
        for png, filename in (
            (event.form_screenshot_png, form_screenshot(event.number)),
            (event.screenshot_png, step_screenshot(event.number)),
        ):
            if png:
                self._in_background(_save_screenshot, folder / filename, png)
        self._log(
            folder,
            "step",
            event.error is not None,
            event.at,
            {
                "number": event.number,
                "goal": event.goal,
                "actions": event.actions,
                "elements": event.elements,
                "url": event.url,
                "result_error": event.error,
                **({"settled": event.settled} if event.settled is not None else {}),
            },
        )

    def _keep_traces(self, name: str, label: str | None, status: Status) -> None:
        """Write a run's trace.zip (already redacted by the runner) if --trace keeps it for that run's status. One the
        agent did not write, its run having passed, is said so should the test's final status want it after all."""
        if (name, label) not in self._traces:
            return
        trace, pictures = self._traces.pop((name, label)), self._pictures.pop((name, label), [])
        failed = status in (Status.FAILED, Status.ERRORED)
        if not (self.trace is TraceMode.ON or (self.trace is TraceMode.RETAIN_ON_FAILURE and failed)):
            return
        if trace.zip is None:
            why = {"why": f"the run passed when its trace was stopped, so it was not written; the test ended {status.value}"}
            self._log(self._dir(name, label), "trace_not_written", True, time.time(), why)
        else:
            self._in_background(
                _write_trace, self._dir(name, label) / TRACE, trace.zip, pictures if trace.with_screenshots else []
            )

    def _picture(self, event: Event) -> None:
        """Keep a picture a run took, with its time, for its trace's film strip."""
        if isinstance(event, StepRecorded):
            taken = [(event.form_screenshot_at or event.at, event.form_screenshot_png), (event.at, event.screenshot_png)]
        elif isinstance(event, (FinalScreenshot, TestStepEnded)):
            taken = [(event.at, event.png)]
        elif isinstance(event, ReplayDrifted):
            taken = [(event.at, event.live_png)]
        else:
            return
        self._pictures.setdefault((event.name, event.label), []).extend((at, png) for at, png in taken if png)

    def _log(self, folder: Path, kind: str, error: bool, at: float, detail: dict[str, Any]) -> None:
        line = {"ts": datetime.fromtimestamp(at, UTC).isoformat(timespec="milliseconds"), "type": kind, "error": error, **detail}
        with (folder / EVENTS).open("a", encoding="utf-8") as f:
            f.write(json.dumps(line, ensure_ascii=False, default=str) + "\n")

    def _in_background(self, job: Callable[..., None], *args: Any) -> None:
        if self._writer is None:
            self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="preview-qa-artifacts")
        self._writer.submit(_logged, job, *args)

    def _finish_test(self, name: str, finished: list[TestResult]) -> None:
        folder = self._dir(name, create=False)  # a labelled run's is made when it ends (AttemptFinished)
        _animate(folder, folder not in self._final_is_a_step)
        if self._run is not None:
            tests = [with_test_artifacts(self.out, test) for test in finished]
            self._write_results(self._run.model_copy(update={"tests": tests}))

    def _dir(self, name: str, label: str | None = None, create: bool = True) -> Path:
        folder = self.out / test_dir(name) / (label or "")
        if create:
            folder.mkdir(parents=True, exist_ok=True)
        return folder

    def _write_results(self, run: RunResult) -> None:
        write_atomic(self.out / RESULTS, json.dumps(results_document(run), indent=2, ensure_ascii=False))


def _animate(folder: Path, with_final: bool = True) -> None:
    """run.gif of the folder's step screenshots and final page, unless that page is the last step's picture already
    (none for fewer than two)."""
    frames = step_screenshots(folder, "(-form)?")  # in step order, a step's filled-in form before its result
    if with_final and (folder / "final.png").exists():
        frames.append(folder / "final.png")
    gif = animation([f.read_bytes() for f in frames])
    if gif is not None:
        write_atomic(folder / "run.gif", gif)


def _save_screenshot(path: Path, png: bytes, *also: Path) -> None:
    """The screenshot, shrunk, at `path` and at each of `also`."""
    try:
        png = shrink_screenshot(png)
    except Exception as e:  # an image Pillow cannot read is still evidence: keep the browser's bytes
        log.warning("could not shrink %s, kept as taken: %s: %s", path.name, type(e).__name__, e)
    for where in (path, *also):
        write_atomic(where, png)


def _write_trace(path: Path, data: bytes, pictures: list[tuple[float, bytes]]) -> None:
    write_atomic(path, with_film_strip(data, pictures))


def _logged(job: Callable[..., None], *args: Any) -> None:
    """Run a writer-thread job; its failure is logged, never lost in an unread future."""
    try:
        job(*args)
    except Exception:
        log.exception("writing artifacts failed")


def results_document(run: RunResult) -> dict[str, Any]:
    """results.json: the run's totals, then one entry per test in manifest order."""
    doc = run.model_dump(mode="json", exclude={"tests"})
    return {
        "schema_version": SCHEMA_VERSION,
        **doc,
        "status": run.status.value,
        "totals": {s.value: run.count(s) for s in Status}
        | {
            "total": len(run.tests),
            "flaky": len(run.flaky),
            "healed": len(run.healed),
            "fell_back": len(run.fell_back),
            "regressions": len(run.regressions),
            "vacuous": len(run.proved(ProofVerdict.VACUOUS)),
            "changed": len(run.changed),
            "unverified": len(run.unverified),
        },
        "usage": run.usage.model_dump(),
        "tests": [t.model_dump(mode="json") for t in run.tests],
    }
