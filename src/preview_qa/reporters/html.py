"""report.html: one file a reviewer opens to see why each test ended as it did (Jinja2, every text escaped)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined

from preview_qa.events import Event, RunFinished
from preview_qa.reporters import Reporter
from preview_qa.reporters.files import REPORT, safe_name, step_screenshot, test_dir, with_artifacts, write_atomic
from preview_qa.results import OtherRun, RunResult, Status, TestResult
from preview_qa.text import clip

ERROR_LIMIT = 50  # per test; the rest stay in events.jsonl
TEXT_LIMIT = 300
NOT_ERRORS = ("step", "expectation", "verdict")  # shown in their own places, not in the error list


@dataclass
class StepView:
    number: int
    goal: str
    actions: list[str]
    url: str
    error: str | None
    screenshot: str | None  # relative path, when the file exists


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

    @property
    def other_runs(self) -> list[tuple[str, OtherRun]]:
        """The earlier attempts and the baseline run, each named for a reader."""
        runs = [(f"attempt {n} of {self.result.attempts}", o) for n, o in enumerate(self.result.earlier_attempts, 1)]
        return runs + ([("on the baseline", self.result.baseline)] if self.result.baseline else [])


class HtmlReporter(Reporter):
    """Writes report.html when the run ends, from the results and each test's events.jsonl: the same files a reviewer
    has, so that `merge` (which replays only results) writes the same report."""

    def __init__(self, out: Path):
        self.out = out

    def handle(self, event: Event) -> None:
        if isinstance(event, RunFinished):
            write_atomic(self.out / REPORT, self.render(with_artifacts(self.out, event.result)))

    def render(self, run: RunResult) -> str:
        tests = [self._view(t) for t in sorted(run.tests, key=lambda t: -t.status.rank)]  # worst first, else manifest order
        return _template().render(run=run, tests=tests, totals=[(s, run.count(s)) for s in Status], usage=run.usage,
                                  generated=datetime.now(UTC).isoformat(timespec="seconds"))

    def _view(self, test: TestResult) -> TestView:
        view = TestView(result=test, anchor=safe_name(test.name),
                        agent_report=json.dumps(test.agent_report, indent=1, ensure_ascii=False) if test.agent_report else "")
        shots = test.artifacts.get("screenshots", [])
        events = test.artifacts.get("events")
        folder = events.rsplit("/", 1)[0] if isinstance(events, str) else test_dir(test.name)  # the last attempt's
        for line in _events(self.out, test):
            kind = line.get("type")
            if kind == "step":
                number = int(line.get("number") or 0)
                path = f"{folder}/{step_screenshot(number)}"
                view.steps.append(StepView(
                    number=number, goal=clip(str(line.get("goal") or ""), TEXT_LIMIT), url=str(line.get("url") or ""),
                    actions=[_action(a) for a in line.get("actions") or [] if isinstance(a, dict)],
                    error=clip(str(line["result_error"]), TEXT_LIMIT) if line.get("result_error") else None,
                    screenshot=path if path in shots else None))
            elif line.get("error") is True and kind not in NOT_ERRORS:
                if len(view.errors) < ERROR_LIMIT:
                    view.errors.append(ErrorView(kind=str(kind), at=str(line.get("ts", ""))[11:23],
                                                 text=clip(_describe(line), TEXT_LIMIT)))
                else:
                    view.errors_left_off += 1
        return view


def _events(out: Path, test: TestResult) -> list[dict[str, Any]]:
    """The test's events.jsonl, skipping a line a crash cut short."""
    rel = test.artifacts.get("events")
    path = (out / rel).resolve() if isinstance(rel, str) else None
    if path is None or out.resolve() not in path.parents or not path.is_file():  # merged results come from elsewhere
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


def _template() -> Any:
    env = Environment(loader=PackageLoader("preview_qa.reporters", "templates"), autoescape=True,
                      undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    return env.get_template("report.html.j2")


def _action(action: dict[str, Any]) -> str:
    """`click {"index": 4}`: an action's name and its parameters (secrets are already placeholders)."""
    return clip(" ".join(f"{name} {json.dumps(params, ensure_ascii=False)}" for name, params in action.items()), TEXT_LIMIT)


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
