"""JUnit XML via junitparser: failure vs error by status, a short message, the story in the body, file and line."""

from __future__ import annotations

import re
from pathlib import Path

from junitparser import Attr, Error, Failure, IntAttr, JUnitXml, Properties, Property, Skipped, TestSuite
from junitparser.xunit2 import FlakyError, FlakyFailure, InterimResult, RerunError, RerunFailure
from junitparser.xunit2 import TestCase as SurefireCase

from preview_qa.events import Event, RunFinished, TestFinished
from preview_qa.reporters import Reporter
from preview_qa.reporters.output.card import card_text, failure_card
from preview_qa.reporters.output.files import JUNIT, with_artifacts, workspace_relative, write_atomic
from preview_qa.results import OtherRun, RunResult, Status, TestResult, Usage, one_line

MESSAGE_LIMIT = 200
SUITE = "preview-qa"
# XML 1.0 cannot hold these code points at all, escaped or not, and DEL and the C1 controls are "discouraged" (what
# pytest's junitxml replaces too); the GitHub reporter cleans its Markdown and annotations the same way.
_ILLEGAL_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f\ud800-\udfff\ufffe\uffff]")


# A testcase's children in the order of Maven Surefire's schema (surefire-test-report-3.0.xsd), which is where the
# rerun and flaky elements come from; properties, which Surefire keeps on the suite only, come first as in junit-10.
CHILD_ORDER = (
    "properties",
    "failure",
    "rerunFailure",
    "flakyFailure",
    "skipped",
    "error",
    "rerunError",
    "flakyError",
    "system-out",
    "system-err",
)
# An earlier attempt, as Surefire records it: by whether the test passed in the end, and how that attempt ended.
EARLIER = {
    (True, Status.FAILED): FlakyFailure,
    (True, Status.ERRORED): FlakyError,
    (False, Status.FAILED): RerunFailure,
    (False, Status.ERRORED): RerunError,
}


class _Case(SurefireCase):
    """A testcase with the `file` and `line` attributes that GitHub's JUnit report actions read."""

    file = Attr()
    line = IntAttr()


class JUnitReporter(Reporter):
    """Rewrites junit.xml after every finished test, so a cancelled run still leaves a valid file. Test files are
    relative to `workspace` (default: the working directory, which the action sets to the workspace)."""

    def __init__(self, out: Path, workspace: Path | None = None):
        self.out, self.path = out, out / JUNIT
        self.workspace = workspace or Path.cwd()
        self._finished: list[TestResult] = []

    def handle(self, event: Event) -> None:
        if isinstance(event, TestFinished):
            self._finished.append(event.result)
            write_atomic(self.path, render(self._finished, workspace=self.workspace))
        elif isinstance(event, RunFinished):
            run = with_artifacts(self.out, event.result)  # attachments: the files the artifacts reporter wrote
            write_atomic(self.path, render(run.tests, run, self.workspace))


def render(tests: list[TestResult], run: RunResult | None = None, workspace: Path | None = None) -> bytes:
    suite = TestSuite(SUITE)
    for name, value in usage_properties(sum((t.usage for t in tests), Usage())).items():
        suite.add_property(name, value)  # the run's totals; before the testcases, where the schema wants them
    for test in tests:
        suite.add_testcase(_case(test, workspace or Path.cwd(), run.base_url if run else ""))
    if run is not None:
        suite.timestamp = run.started_at
    xml = JUnitXml(SUITE)
    xml.add_testsuite(suite)
    xml.update_statistics()  # counts, and times as the sum of case times...
    wall = round(run.duration_s if run else sum(t.duration_s for t in tests), 3)
    suite.time = xml.time = wall  # ...which the run's wall time replaces: concurrent tests overlap
    body: bytes = xml.tostring()
    return b'<?xml version="1.0" encoding="utf-8"?>\n' + body


def _case(test: TestResult, workspace: Path, base_url: str) -> _Case:
    case = _Case(clean(test.name), clean(Path(test.file).stem or SUITE), round(test.duration_s, 3))
    if test.file:
        case.file = clean(workspace_relative(test.file, workspace))
    if test.line:
        case.line = test.line
    # Never empty: a JUnit reader shows a missing message as "undefined".
    message = clean(one_line(test.reason, MESSAGE_LIMIT)) or test.status.value
    if test.status is Status.FAILED:
        failure = Failure(message, "failed")
        failure.text = clean(details(test, base_url))
        case.result = [failure]
    elif test.status is Status.ERRORED:
        error = Error(message, "errored")
        error.text = clean(details(test, base_url))
        case.result = [error]
    elif test.status is Status.SKIPPED:
        case.result = [Skipped(message)]
    out = _system_out(test.status, test.steps, test.execution.value, test.artifacts)
    if out:
        case.system_out = clean(out)
    for attempt in test.earlier_attempts:
        case.add_interim_result(_earlier(attempt, test.status is Status.PASSED))
    if test.status is not Status.SKIPPED:
        properties = Properties()
        for name, value in {"path": test.execution.value, **usage_properties(test.usage), **_rerun_properties(test)}.items():
            properties.add_property(Property(name, value))
        case.append(properties)  # junitparser has no API for a testcase's properties; _ordered puts them first
    _ordered(case)
    return case


def _earlier(attempt: OtherRun, passed_at_last: bool) -> InterimResult:
    """flakyFailure/flakyError in a test that passed at last, rerunFailure/rerunError in one that did not."""
    kind = EARLIER[(passed_at_last, Status.ERRORED if attempt.status is Status.ERRORED else Status.FAILED)]
    element = kind(clean(one_line(attempt.reason, MESSAGE_LIMIT)), attempt.status.value)
    element.stack_trace = clean("\n".join([attempt.reason, *[f"- {c}" for c in attempt.causes]]))  # Surefire needs one
    out = _system_out(attempt.status, None, None, attempt.artifacts)
    if out:
        element.system_out = clean(out)
    return element


def _rerun_properties(test: TestResult) -> dict[str, str]:
    found = {"attempts": str(test.attempts)} if test.attempts > 1 else {}
    if test.flaky:
        found["flaky"] = "true"
    if test.pass_rate is not None:  # --repeat-each
        found["pass_rate"] = f"{test.pass_rate:g}"
    if test.healed:
        found["healed"] = "true"
    if test.unverified and test.status is Status.PASSED:  # it passed on the agent's word alone
        found["unverified"] = test.unverified
    if test.changed:  # expect.visual: it looks different from the default branch
        found["visual_changed"] = test.changed
    if test.fell_back is not None:  # why its replay handed it to the agent: page_changed, llm_answer or tool
        found["fell_back"] = test.fell_back.value
    if test.baseline is not None:
        found |= {"baseline_status": test.baseline.status.value, "regression": str(bool(test.regression)).lower()}
    return found


def _ordered(case: SurefireCase) -> None:
    children = sorted(case._elem, key=lambda child: CHILD_ORDER.index(child.tag))  # stable: attempts stay in order
    for child in children:
        case._elem.remove(child)
    case._elem.extend(children)


def usage_properties(usage: Usage) -> dict[str, str]:
    """Tokens and cost as JUnit properties (a test's, or the run's totals)."""
    values = {
        "llm_calls": usage.llm_calls,
        "llm_requests": usage.llm_requests,
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "total_tokens": usage.total_tokens,
    }
    found = {k: str(v) for k, v in values.items()}
    if usage.cost_usd is not None:
        found["cost_usd"] = f"{usage.cost_usd:.6f}"
    return found


def details(test: TestResult, base_url: str = "") -> str:
    """The body: the test's failure card as plain text (the same facts as in the job summary and the PR comment)."""
    return card_text(failure_card(test, base_url))


def _system_out(status: Status, steps: int | None, path: str | None, artifacts: dict[str, str | list[str]]) -> str:
    lines = [f"steps: {steps}, path: {path}"] if status is not Status.SKIPPED and steps is not None else []
    for value in artifacts.values():
        for path in [value] if isinstance(value, str) else value:
            lines.append(f"[[ATTACHMENT|{path}]]")
    return "\n".join(lines)


def clean(text: str) -> str:
    return _ILLEGAL_XML.sub("\ufffd", text)
