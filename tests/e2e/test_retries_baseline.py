"""End to end: checks that wait, retries that label a flake, and a baseline that tells a regression from an old failure.
The preview is the session's fixture site; the baseline is a second one serving the last release (production=True)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from junitparser.xunit2 import JUnitXml as SurefireXml

from tests.conftest import CliRun, scripted_run
from tests.e2e.processes import closed_port
from tests.repo import JUNIT_SCHEMA
from tests.site import DemoSite

# One run of six tests, some run two or three times: more than pytest's usual 300 s on a busy 2-core machine.
pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]

PASS = {"done": {"status": "pass", "reason": "Looks right."}}


def manifest(account_key: str) -> str:
    return f"""
version: 1
defaults: {{max_steps: 3, timeout: 90, expect: {{timeout: 1}}}}
tests:
  - name: account broken on first load
    start: /account?key={account_key}
    task: "[look] Check the account page welcomes the user back."
    retries: 1
    expect: {{text: ["Welcome back"]}}
  - name: new checkout regressed
    start: /new-checkout
    task: "[look] Check the card form is ready."
    retries: 1
    expect: {{text: ["Card form ready"]}}
  - name: free shipping broken everywhere
    start: /product
    task: "[shipping] Check the anvil ships for free."
  - name: confirmation after 2.5 s
    start: /order
    task: "[order] Place the order and check it is confirmed."
    expect: {{timeout: 5, text: ["Order confirmed"]}}
  - name: confirmation slower than its wait
    tags: [in-vain]
    start: /order?ms=9000
    task: "[order] Place the order and check it is confirmed."
    expect: {{text: ["Order confirmed"]}}
  - name: saving notice goes away after 1 s
    start: /save
    task: "[save] Save the profile and check the saving notice goes away."
    expect: {{timeout: 5, not_text: ["Saving"]}}
"""


SCENARIOS = [
    {"match": "[look]", "turns": [PASS]},
    {"match": "[shipping]", "turns": [{"done": {"status": "fail", "reason": "No free shipping is offered."}}]},
    {"match": "[order]", "turns": [{"actions": [{"click": {"element": "Place order"}}]}, PASS]},
    {"match": "[save]", "turns": [{"actions": [{"click": {"element": "Save profile"}}]}, PASS]},
]


@pytest.fixture(scope="module")
def production() -> Iterator[DemoSite]:
    with DemoSite(production=True) as s:
        yield s


@pytest.fixture(scope="module")
def full_run(tmp_path_factory: pytest.TempPathFactory, site: DemoSite, production: DemoSite) -> Iterator[CliRun]:
    with scripted_run(
        tmp_path_factory.mktemp("reruns"),
        site,
        manifest(uuid.uuid4().hex),
        SCENARIOS,
        "--baseline-url",
        production.url,
        "--fail-on",
        "regressions",
        "--skip-tag",
        "in-vain",
        "--concurrency",
        "3",
    ) as run:
        yield run


def test_a_page_broken_on_its_first_load_passes_on_the_retry_as_flaky(full_run: CliRun) -> None:
    t = full_run.test("account broken on first load")
    assert (t["status"], t["flaky"], t["attempts"]) == ("passed", True, 2), t
    first = t["earlier_attempts"][0]
    assert first["status"] == "failed"
    assert first["reason"].startswith("expectation text failed: expected visible text 'Welcome back', found ")
    assert t["baseline"] is None and t["regression"] is None  # a pass is not re-run on the baseline
    # Each attempt's evidence is kept, apart and labelled; the test's own is its last attempt's.
    assert "/attempt-1/" in first["artifacts"]["final_screenshot"] and "/attempt-2/" in t["artifacts"]["final_screenshot"]
    for path in (first["artifacts"]["events"], t["artifacts"]["events"], t["artifacts"]["final_screenshot"]):
        assert (full_run.out / path).is_file()


def test_junit_records_the_flaky_and_the_rerun_attempts_as_surefire_does(full_run: CliRun) -> None:
    xml = (full_run.out / "junit.xml").read_text(encoding="utf-8")
    JUNIT_SCHEMA.validate(xml)
    cases = {c.name: c for suite in SurefireXml.fromfile(str(full_run.out / "junit.xml")) for c in suite}
    flaky = cases["account broken on first load"]
    assert flaky.is_passed and [f.message for f in flaky.flaky_failures()] and not flaky.is_rerun
    assert "expected visible text 'Welcome back'" in flaky.flaky_failures()[0].stack_trace
    regressed = cases["new checkout regressed"]
    assert regressed.result[0]._tag == "failure" and len(regressed.rerun_failures()) == 1 and not regressed.is_flaky


def test_a_page_broken_on_the_preview_but_fine_on_the_baseline_is_a_regression(full_run: CliRun) -> None:
    t = full_run.test("new checkout regressed")
    assert (t["status"], t["attempts"], t["regression"]) == ("failed", 2, True), t
    assert t["baseline"]["status"] == "passed"
    assert (full_run.out / t["baseline"]["artifacts"]["final_screenshot"]).is_file()
    assert "/baseline/" in t["baseline"]["artifacts"]["final_screenshot"]


def test_a_page_broken_on_both_is_no_regression(full_run: CliRun) -> None:
    t = full_run.test("free shipping broken everywhere")
    assert (t["status"], t["regression"]) == ("failed", False), t
    assert t["baseline"] == t["baseline"] | {"status": "failed", "reason": "agent: No free shipping is offered."}


def test_the_run_counts_regressions_and_fails_on_them(full_run: CliRun) -> None:
    assert full_run.exit_code == 1, full_run.stderr
    totals = full_run.results["totals"]
    assert (totals["regressions"], totals["flaky"]) == (1, 1)
    assert full_run.results["baseline_url"].startswith("http://127.0.0.1:")
    assert "1 flaky, 1 regression(s)" in full_run.stdout
    report = (full_run.out / "report.html").read_text(encoding="utf-8")
    assert "flaky: passed on attempt 2" in report and "regression: passed on the baseline" in report


def test_a_confirmation_that_appears_after_2_5_s_passes(full_run: CliRun) -> None:
    t = full_run.test("confirmation after 2.5 s")
    assert t["status"] == "passed", t
    assert t["expectations"][0] | {"ok": True, "timeout_s": 5} == t["expectations"][0]


def test_not_text_that_disappears_after_1_s_passes(full_run: CliRun) -> None:
    t = full_run.test("saving notice goes away after 1 s")
    assert t["status"] == "passed", t
    assert t["expectations"][0]["check"] == "not_text" and t["expectations"][0]["ok"]


def test_only_old_failures_pass_fail_on_regressions(tmp_path: Path, site: DemoSite, production: DemoSite) -> None:
    with scripted_run(
        tmp_path,
        site,
        manifest("unused"),
        SCENARIOS,
        "--only",
        "free shipping broken everywhere",
        "--only",
        "confirmation slower than its wait",
        "--baseline-url",
        production.url,
        "--fail-on",
        "regressions",
    ) as run:
        assert run.exit_code == 0, run.stderr
        t = run.test("free shipping broken everywhere")
        assert (t["status"], t["regression"], t["baseline"]["status"]) == ("failed", False, "failed")
        # A check that waits in vain says what it saw when the wait ended (the defaults' expect.timeout: 1 s).
        t = run.test("confirmation slower than its wait")
        assert (t["status"], t["regression"]) == ("failed", False)
        assert t["reason"].startswith("expectation text failed: expected visible text 'Order confirmed', found ")
        assert t["reason"].endswith("after waiting 1 s")


def test_an_unreachable_baseline_is_one_clear_error_and_the_preview_results_are_written(tmp_path: Path, site: DemoSite) -> None:
    closed = f"http://127.0.0.1:{closed_port()}"
    flags = ("--only", "free shipping broken everywhere", "--baseline-url", closed, "--wait-timeout", "1")
    with scripted_run(tmp_path, site, manifest("unused"), SCENARIOS, *flags) as run:  # the baseline gets the preview's wait
        assert run.exit_code == 2
        errors = [line for line in run.stderr.splitlines() if line.startswith("preview-qa: error:")]
        assert len(errors) == 1 and f"--baseline-url is unreachable: ConnectError for {closed}" in errors[0], run.stderr
        results = json.loads((run.out / "results.json").read_text(encoding="utf-8"))
        assert results["tests"][0]["status"] == "failed" and results["tests"][0]["baseline"] is None
        assert results["baseline_error"].startswith("--baseline-url is unreachable")
