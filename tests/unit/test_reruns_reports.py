"""Flaky tests, regressions and old failures as a reader meets them: JUnit (Surefire's elements, schema-valid),
results.json, the console, report.html, the job summary and the PR comment, and each attempt's evidence on disk."""

from __future__ import annotations

import io
import json
from pathlib import Path

from junitparser.xunit2 import JUnitXml as SurefireXml

from preview_qa.events import (
    AttemptFinished,
    FinalScreenshot,
    Observed,
    RunFinished,
    RunStarted,
    StepRecorded,
    TestFinished,
)
from preview_qa.reporters.artifacts import ArtifactsReporter
from preview_qa.reporters.console import ConsoleReporter
from preview_qa.reporters.github.commands import outputs
from preview_qa.reporters.github.markdown import render_markdown
from preview_qa.reporters.html import HtmlReporter
from preview_qa.reporters.junit import render
from preview_qa.reporters.output.files import test_dir as folder_of
from preview_qa.results import OtherRun, Status
from tests.builders import plain_png, result, run_of
from tests.fakes.github import rendered, visible
from tests.repo import JUNIT_SCHEMA

HOSTILE = "<b>x</b> | `y` ::error::z"


def attempt(status: Status, reason: str = "first try broke") -> OtherRun:
    return OtherRun(
        status=status,
        reason=reason,
        causes=["console error: boom"],
        duration_s=1,
        artifacts={"final_screenshot": "tests/x/attempt-1/final.png"},
    )


RUN = run_of(
    result("flaky one", Status.PASSED, attempts=2, flaky=True, earlier_attempts=[attempt(Status.FAILED)]),
    result(
        "flaky after an error",
        Status.PASSED,
        attempts=3,
        flaky=True,
        earlier_attempts=[attempt(Status.ERRORED), attempt(Status.FAILED, HOSTILE)],
    ),
    result(
        "regressed",
        Status.FAILED,
        attempts=2,
        earlier_attempts=[attempt(Status.ERRORED)],
        baseline=OtherRun(status=Status.PASSED, reason="fine there"),
        regression=True,
    ),
    result("old failure", Status.FAILED, baseline=OtherRun(status=Status.FAILED, reason="broken there too"), regression=False),
    result("baseline errored", Status.FAILED, baseline=OtherRun(status=Status.ERRORED, reason="timed out"), regression=False),
    result("fine", Status.PASSED),
    baseline_url="https://prod.example.com",
)


def test_junit_has_surefires_flaky_and_rerun_elements_in_its_order_and_validates(tmp_path: Path) -> None:
    xml = render(RUN.tests, RUN)
    JUNIT_SCHEMA.validate(xml.decode("utf-8"))
    (tmp_path / "junit.xml").write_bytes(xml)
    cases = {c.name: c for suite in SurefireXml.fromfile(str(tmp_path / "junit.xml")) for c in suite}
    flaky = cases["flaky one"]
    assert flaky.is_passed and flaky.is_flaky and not flaky.is_rerun
    [earlier] = flaky.flaky_failures()
    assert (earlier.message, earlier.type) == ("first try broke", "failed")
    assert earlier.stack_trace == "first try broke\n- console error: boom"
    assert "[[ATTACHMENT|tests/x/attempt-1/final.png]]" in earlier.system_out
    mixed = cases["flaky after an error"]
    assert [len(mixed.flaky_errors()), len(mixed.flaky_failures())] == [1, 1]
    regressed = cases["regressed"]
    assert regressed.result[0]._tag == "failure" and len(regressed.rerun_errors()) == 1 and not regressed.is_flaky
    tags = [child.tag for child in regressed._elem]
    assert tags == ["properties", "failure", "rerunError", "system-out"]
    props = {p.name: p.value for p in regressed.properties()}
    assert props | {"attempts": "2", "baseline_status": "passed", "regression": "true"} == props
    assert {p.name: p.value for p in cases["flaky one"].properties()}["flaky"] == "true"
    suite = next(iter(SurefireXml.fromfile(str(tmp_path / "junit.xml"))))
    assert (suite.tests, suite.failures, suite.errors) == (6, 3, 0)  # earlier attempts are not counted as tests


def test_a_schema_without_the_surefire_elements_would_refuse_them() -> None:
    rerun = (
        '<testsuites><testsuite name="s" tests="1"><testcase name="a" time="1"><failure message="m"/>'
        '<rerunFailure type="failed" message="m">{}</rerunFailure></testcase></testsuite></testsuites>'
    )
    assert JUNIT_SCHEMA.is_valid(rerun.format("<stackTrace>t</stackTrace>"))
    assert not JUNIT_SCHEMA.is_valid(rerun.format(""))  # Surefire requires the stack trace
    wrong_order = (
        '<testsuites><testsuite name="s" tests="1"><testcase name="a" time="1"><rerunError type="e">'
        '<stackTrace>t</stackTrace></rerunError><failure message="m"/></testcase></testsuite></testsuites>'
    )
    assert not JUNIT_SCHEMA.is_valid(wrong_order)


def test_summary_and_comment_group_regressions_old_failures_and_flaky_tests() -> None:
    text = render_markdown(RUN, str, None, 60_000)
    groups = text.split("#### Compared with the baseline", 1)[1].split("####", 1)[0]
    shown = rendered(groups)
    assert "ran once more on https://prod.example.com." in visible(shown) and "<a " not in shown  # GitHub's view
    assert "**🔴 Regressions (they pass on the baseline): 1**: regressed" in groups
    assert "**🟠 Failing on the baseline too: 1**: old failure" in groups
    assert "**⚪ Not confirmed on the baseline (it errored there, or did not run): 1**: baseline errored" in groups
    assert "**🟡 Flaky (passed after a retry): 2**: flaky one, flaky after an error" in groups
    page = rendered(text)
    assert "<td>flaky one · <em>flaky: passed on attempt 2</em></td>" in page
    assert "<td>regressed · <em>2 attempts</em> · <em>regression: passed on the baseline</em></td>" in page
    assert "<td>old failure · <em>failed on the baseline too</em></td>" in page
    assert "Attempt 1 of 2: errored: first try broke" in visible(page) and "On the baseline: passed: fine there" in visible(page)
    assert "fine |" in text and "fine · _" not in text


def test_without_a_baseline_only_flaky_tests_are_grouped_and_outputs_count_both() -> None:
    run = run_of(*RUN.tests[:2], result("broken", Status.FAILED))
    text = render_markdown(run, str, None, 60_000)
    assert "#### Flaky tests" in text and "Compared with the baseline" not in text and "Regressions" not in text
    assert "#### Flaky" not in render_markdown(run_of(result("fine", Status.PASSED)), str, None, 60_000)
    assert "flaky<<" in outputs(RUN, Path("out")) and "\n2\n" in outputs(RUN, Path("out")).split("flaky<<", 1)[1]


def test_console_marks_flaky_tests_and_regressions_and_names_failed_attempts() -> None:
    stream = io.StringIO()
    console = ConsoleReporter(stream=stream, width=250)
    failed_first = result("flaky one", Status.FAILED)
    console.handle(AttemptFinished(name="flaky one", label="attempt-1", result=failed_first))
    console.handle(AttemptFinished(name="flaky one", label="attempt-2", result=result("flaky one", Status.PASSED)))
    console.handle(TestFinished(result=RUN.tests[0]))
    console.handle(AttemptFinished(name="regressed", label="baseline", result=result("regressed", Status.PASSED)))
    console.handle(RunFinished(result=RUN))
    out = stream.getvalue()
    assert "flaky one attempt-1: failed" in out and "attempt-2" not in out  # a passing attempt needs no line
    assert "passed (flaky: passed on attempt 2) flaky one" in out
    assert "regressed on the baseline: passed" in out
    assert "2 flaky, 1 regression(s)" in out


def test_report_html_marks_tests_and_lists_their_other_runs(tmp_path: Path) -> None:
    first = f"{folder_of('flaky one')}/attempt-1/final.png"  # the report links what is on disk
    (tmp_path / first).parent.mkdir(parents=True)
    (tmp_path / first).write_bytes(plain_png())
    HtmlReporter(tmp_path).handle(RunFinished(result=RUN))
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert '<span class="mark">flaky: passed on attempt 2</span>' in html
    assert "regression: passed on the baseline" in html and "1 regression(s)" in html and "2 flaky test(s)" in html
    assert "attempt 1 of 3" in html and "on the baseline" in html and "broken there too" in html
    assert f'<a href="{first}">final page</a>' in html
    assert HOSTILE not in html and "&lt;b&gt;x&lt;/b&gt;" in html


def test_each_attempts_evidence_is_kept_apart_and_the_last_one_is_the_tests(tmp_path: Path) -> None:
    reporter = ArtifactsReporter(tmp_path)
    reporter.handle(RunStarted(manifest="qa.yml", base_url="http://x", test_names=["t"]))
    for label in ("attempt-1", "attempt-2", "baseline"):
        reporter.handle(
            StepRecorded(name="t", number=1, goal=label, actions=[], url="", error=None, screenshot_png=plain_png(), label=label)
        )
        reporter.handle(FinalScreenshot(name="t", png=plain_png(), label=label))
        reporter.handle(Observed(name="t", kind="verdict", error=False, detail={"run": label}, label=label))
        reporter.handle(AttemptFinished(name="t", label=label, result=result("t", Status.FAILED)))
        if label == "attempt-2":
            final = result("t", Status.PASSED, attempts=2, flaky=True, earlier_attempts=[attempt(Status.FAILED)])
            reporter.handle(TestFinished(result=final))
    done = final.model_copy(deep=True, update={"baseline": OtherRun(status=Status.FAILED, reason="x")})
    reporter.handle(RunFinished(result=run_of(done, baseline_url="https://prod.example.com")))
    results = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    t = results["tests"][0]
    folder = t["artifacts"]["events"].rsplit("/", 1)[0]
    assert folder.endswith("/attempt-2") and t["artifacts"]["animation"] == f"{folder}/run.gif"
    assert t["earlier_attempts"][0]["artifacts"]["events"].endswith("/attempt-1/events.jsonl")
    assert t["baseline"]["artifacts"]["final_screenshot"].endswith("/baseline/final.png")
    for label in ("attempt-1", "attempt-2", "baseline"):
        events = (tmp_path / folder.replace("attempt-2", label) / "events.jsonl").read_text(encoding="utf-8")
        assert [json.loads(line).get("run") for line in events.splitlines()] == [None, label]  # its own events only
        assert (tmp_path / folder.replace("attempt-2", label) / "run.gif").is_file()
