"""junit.xml validated against a JUnit schema (tests/data/junit.xsd), also with text that XML cannot hold."""

from __future__ import annotations

from pathlib import Path

import pytest
from junitparser import JUnitXml

from preview_qa.events import RunFinished, TestFinished
from preview_qa.reporters.junit import MESSAGE_LIMIT, JUnitReporter, render
from preview_qa.results import ExpectationOutcome, Status
from tests.builders import result, run_of
from tests.repo import JUNIT_SCHEMA

HOSTILE = "bad\x00nul \x1b[31mansi\x1b[0m \x07bell \ud800lone-surrogate \ufffe\uffff ]]> </failure> & <script>"


def parse(xml: bytes, tmp_path: Path) -> JUnitXml:
    JUNIT_SCHEMA.validate(xml.decode("utf-8"))
    path = tmp_path / "junit.xml"
    path.write_bytes(xml)
    return JUnitXml.fromfile(str(path))


def test_the_schema_can_refuse_a_file() -> None:
    assert not JUNIT_SCHEMA.is_valid('<testsuites><testsuite name="s" tests="1"><testcase time="1"/></testsuite></testsuites>')
    assert not JUNIT_SCHEMA.is_valid('<testsuites><testsuite name="s" tests="1"><testcase name="a"/></testsuite></testsuites>')


def test_every_status_is_valid_junit(tmp_path: Path) -> None:
    tests = [
        result("passes", Status.PASSED),
        result(
            "fails",
            Status.FAILED,
            "expectation url failed: expected x, found y",
            causes=["the agent said pass: fine"],
            expectations=[ExpectationOutcome(check="url", expected="x", found="y", ok=False)],
            artifacts={"screenshots": ["tests/fails/step-01.png"], "events": "tests/fails/events.jsonl"},
        ),
        result("errors", Status.ERRORED, "LLM provider error: HTTP 500: down"),
        result("skipped", Status.SKIPPED, "not ready"),
    ]
    xml = parse(render(tests, run_of(*tests)), tmp_path)
    suite = next(iter(xml))
    assert (suite.tests, suite.failures, suite.errors, suite.skipped) == (4, 1, 1, 1)
    cases = {c.name: c for c in suite}
    failure = cases["fails"].result[0]
    assert failure._tag == "failure" and failure.message == "expectation url failed: expected x, found y"
    assert "- the agent said pass: fine" in failure.text and "- url: expected x, found y" in failure.text
    assert "[[ATTACHMENT|tests/fails/step-01.png]]" in cases["fails"].system_out
    assert cases["errors"].result[0]._tag == "error"
    assert cases["skipped"].result[0]._tag == "skipped" and cases["skipped"].result[0].message == "not ready"
    assert cases["passes"].is_passed
    assert {c._elem.get("file") for c in suite} == {"qa.yml"} and {c._elem.get("line") for c in suite} == {"3"}
    assert all(float(c.time) == 1.25 for c in suite)
    assert float(suite.time) == 9  # the run's wall time: concurrent tests overlap, so it is not the sum of the cases


def test_long_reasons_are_short_messages_with_the_full_story_in_the_body(tmp_path: Path) -> None:
    reason = "the agent said: " + "very long " * 100
    suite = next(iter(parse(render([result("t", Status.FAILED, reason)]), tmp_path)))
    failure = next(iter(suite)).result[0]
    assert len(failure.message) == MESSAGE_LIMIT and failure.message.endswith("…")
    assert failure.text.startswith(reason.strip())


@pytest.mark.parametrize("status", [Status.FAILED, Status.ERRORED, Status.SKIPPED, Status.PASSED])
def test_characters_xml_cannot_hold_are_replaced_not_fatal(status: Status, tmp_path: Path) -> None:
    test = result(
        f"name {HOSTILE}",
        status,
        f"reason {HOSTILE}",
        causes=[HOSTILE],
        expectations=[ExpectationOutcome(check="text", expected=HOSTILE, found=HOSTILE, ok=False)],
        agent_report={"status": "pass", "reason": HOSTILE},
    )
    xml = render([test], run_of(test))
    case = next(iter(next(iter(parse(xml, tmp_path)))))
    assert case.name.startswith("name bad\ufffdnul \ufffd[31mansi")
    assert "</failure> & <script>" in case.name  # escaped, never markup
    if status is not Status.PASSED:
        assert case.result[0].message.startswith("reason bad\ufffdnul")
    assert b"\x00" not in xml and b"\x1b" not in xml


@pytest.mark.parametrize("name", ["a/b/../../etc/passwd", "..", "Ünïcödé ✓ 測試 🚀", "x" * 500, "  spaces  ", "tab\tnewline\n"])
def test_any_test_name_is_a_valid_testcase_name(name: str, tmp_path: Path) -> None:
    case = next(iter(next(iter(parse(render([result(name, Status.FAILED)]), tmp_path)))))
    assert case.name == name


def test_the_file_is_valid_after_every_finished_test_and_at_the_end(tmp_path: Path) -> None:
    reporter = JUnitReporter(tmp_path)
    tests = [result("one", Status.PASSED), result("two", Status.ERRORED, "cancelled")]
    reporter.handle(TestFinished(result=tests[0]))
    assert next(iter(parse((tmp_path / "junit.xml").read_bytes(), tmp_path))).tests == 1
    reporter.handle(TestFinished(result=tests[1]))
    reporter.handle(RunFinished(result=run_of(*tests)))
    suite = next(iter(parse((tmp_path / "junit.xml").read_bytes(), tmp_path)))
    assert (suite.tests, suite.errors) == (2, 1)


def test_file_is_relative_to_the_workspace_like_the_annotations(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    inside = result("inside", Status.FAILED).model_copy(update={"file": str(workspace / "qa" / "qa.yml")})
    outside = result("outside", Status.FAILED).model_copy(update={"file": "/elsewhere/qa.yml"})
    reporter = JUnitReporter(tmp_path / "out", workspace=workspace)
    reporter.handle(RunFinished(result=run_of(inside, outside)))
    suite = next(iter(parse((tmp_path / "out" / "junit.xml").read_bytes(), tmp_path)))
    assert {c.name: c._elem.get("file") for c in suite} == {"inside": "qa/qa.yml", "outside": "/elsewhere/qa.yml"}


@pytest.mark.parametrize("status", [Status.FAILED, Status.ERRORED, Status.SKIPPED])
def test_every_result_has_a_message_attribute_even_without_a_reason(status: Status, tmp_path: Path) -> None:
    case = next(iter(next(iter(parse(render([result("t", status, reason="")]), tmp_path)))))
    assert case.result[0]._elem.get("message") == status.value  # a missing one shows as "undefined" in some readers
