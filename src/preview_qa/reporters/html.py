"""report.html: one file a reviewer opens to see why each test ended as it did (Jinja2, every text escaped)."""

from __future__ import annotations

import base64
import hashlib
import json
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from preview_qa.events import Event, ExploreFinished, PageSettled, ReplayFellBack, RunFinished
from preview_qa.reporters import Reporter
from preview_qa.reporters.output.files import (
    REPORT,
    form_screenshot,
    last_run_dir,
    read_events,
    safe_name,
    step_screenshot,
    with_artifacts,
    write_atomic,
)
from preview_qa.reporters.output.findings import Grouped, repro_yaml
from preview_qa.reporters.output.proofs import flagged_tests, proof_counts
from preview_qa.reporters.output.steps import Step, steps_of
from preview_qa.results import EXECUTION_WORDS, Execution, OtherRun, RunResult, Status, TestResult, clip

ERROR_LIMIT = 50  # per test; the rest stay in events.jsonl
TEXT_LIMIT = 300
VIOLATING_ELEMENTS_SHOWN = 50  # per accessibility rule; results.json keeps every one
NOT_ERRORS = ("step", "expectation", "verdict")  # shown in their own places, not in the error list

if TYPE_CHECKING:
    from jinja2 import Template


@dataclass
class StepView:
    step: Step
    screenshot: str | None  # relative paths, when the files exist
    form_screenshot: str | None


@dataclass
class ErrorView:
    kind: str
    at: str
    text: str


@dataclass
class TestView:
    __test__ = False

    result: TestResult
    anchor: str
    steps: list[StepView] = field(default_factory=list)
    errors: list[ErrorView] = field(default_factory=list)
    errors_left_off: int = 0
    agent_report: str = ""  # JSON text; the template escapes it like any other text
    attempts: int | None = None  # None until the results say how often the test ran
    fallback_reason: str | None = None  # why a replay gave way to the agent
    settled: str | None = None  # what settling waited for before the checks (`waited 3.1 s for POST /api/save`)

    @property
    def other_runs(self) -> list[tuple[str, OtherRun]]:
        """The earlier attempts and the baseline run, each named for a reader."""
        earlier = enumerate(self.result.earlier_attempts, 1)
        runs = [(f"attempt {o.attempt or n} of {self.result.attempts}", o) for n, o in earlier]
        return runs + ([("on the baseline", self.result.baseline)] if self.result.baseline else [])


class HtmlReporter(Reporter):
    """Writes report.html when the run ends, from the results and each test's events.jsonl: the same files a reviewer
    has, so that `merge` (which replays only results) writes the same report."""

    def __init__(self, out: Path):
        self.out = out
        self._template: Future[Template] | None = None
        self._done: RunResult | None = None  # `run --explore` renders it again with the findings

    def start(self) -> None:
        """Compile the template (Jinja2's import and compilation, about 0.15 s of CPU) on a thread while the tests run,
        not after the last one: the report is written at the end, when everyone waits for it."""
        compiling = ThreadPoolExecutor(max_workers=1, thread_name_prefix="preview-qa-html")
        self._template = compiling.submit(_template)
        compiling.shutdown(wait=False)  # its one job goes on

    def handle(self, event: Event) -> None:
        if isinstance(event, RunFinished):
            self._done = with_artifacts(self.out, event.result)
            write_atomic(self.out / REPORT, self.render(self._done))
        elif isinstance(event, ExploreFinished) and self._done is not None:
            write_atomic(self.out / REPORT, self.render(self._done.model_copy(update={"explore": event.explore})))

    def render(self, run: RunResult) -> str:
        tests = [self._view(t) for t in sorted(run.tests, key=lambda t: -t.status.rank)]  # worst first, else manifest order
        template = self._template.result() if self._template is not None else _template()
        script = resources.files("preview_qa.reporters").joinpath("templates", "report.js").read_text(encoding="utf-8")
        return template.render(
            run=run,
            tests=tests,
            totals=[(s, run.count(s)) for s in Status],
            priced=any(t.usage.cost_usd is not None for t in run.tests),  # else no Cost column
            script=script,  # our own file, inlined; the CSP lets only its hash run
            script_hash=base64.b64encode(hashlib.sha256(script.encode()).digest()).decode(),
            usage=run.usage,
            generated=datetime.now(UTC).isoformat(timespec="seconds"),
            EXECUTION_WORDS=EXECUTION_WORDS,
            elements_shown=VIOLATING_ELEMENTS_SHOWN,
            proofs=(proof_counts(run), flagged_tests(run)),  # --prove
            explore=Grouped.of(run.explore) if run.explore else None,  # --explore
            repro_yaml=repro_yaml,
        )

    def _view(self, test: TestResult) -> TestView:
        view = TestView(
            result=test,
            anchor=safe_name(test.name),
            agent_report=json.dumps(test.agent_report, indent=1, ensure_ascii=False) if test.agent_report else "",
        )
        view.attempts = attempts_of(test)
        shots = [*test.artifacts.get("screenshots", []), *test.artifacts.get("form_screenshots", [])]
        events = read_events(self.out, test)
        folder = last_run_dir(self.out, test)  # with retries, the last attempt's
        for step in steps_of(events):
            after, form = (f"{folder}/{name(step.number)}" for name in (step_screenshot, form_screenshot))
            view.steps.append(
                StepView(step=step, screenshot=after if after in shots else None, form_screenshot=form if form in shots else None)
            )
        for line in events:
            kind = line.get("type")
            if (fell_back := ReplayFellBack.read(line)) is not None:
                view.fallback_reason = clip(fell_back.reason, TEXT_LIMIT)
            elif (settled := PageSettled.read(line)) is not None:  # the last one: the page the checks judged
                view.settled = clip(settled.summary, TEXT_LIMIT)
            elif line.get("error") is True and kind not in NOT_ERRORS:
                if len(view.errors) < ERROR_LIMIT:
                    view.errors.append(
                        ErrorView(kind=str(kind), at=str(line.get("ts", ""))[11:23], text=clip(_describe(line), TEXT_LIMIT))
                    )
                else:
                    view.errors_left_off += 1
        return view


def attempts_of(test: TestResult) -> int | None:
    """How many times the test ran on the preview; none for a test that never started."""
    return None if test.execution is Execution.NOT_RUN else test.attempts


def _template() -> Template:
    from jinja2 import Environment, PackageLoader, StrictUndefined

    env = Environment(
        loader=PackageLoader("preview_qa.reporters", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    return env.get_template("report.html.j2")


def _describe(detail: dict[str, Any]) -> str:
    """One line from an error event's detail: who or what, then what it said."""
    parts = [str(detail[k]) for k in ("purpose", "method", "url") if detail.get(k)]
    if detail.get("status"):
        parts.append(f"HTTP {detail['status']}")
    if detail.get("failure"):
        parts.append(str(detail["failure"]))
    said = str(detail.get("message") or detail.get("text") or "")
    head = " ".join(parts)
    return f"{head}: {said}" if head and said else head or said
