"""expect.accessibility end to end: axe-core (bundled) on the final page in real Chromium, offline, as a user sees it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.conftest import CliRun, scripted_run
from tests.site import DemoSite

pytestmark = pytest.mark.e2e

MANIFEST = """
version: 1
defaults: {max_steps: 3, timeout: 120, expect: {accessibility: {impact: serious}}}
tests:
  - name: unlabeled input
    start: /newsletter-unlabeled
    task: "[subscribe] Check the newsletter form is shown."
  - name: labeled input
    start: /newsletter
    task: "[subscribe] Check the newsletter form is shown."
  - name: unlabeled input, label rule skipped
    start: /newsletter-unlabeled
    task: "[subscribe] Check the newsletter form is shown."
    expect: {accessibility: {skip_rules: [label]}}
  - name: unlabeled input, form excluded
    start: /newsletter-unlabeled
    task: "[subscribe] Check the newsletter form is shown."
    expect: {accessibility: {exclude: [form]}}
"""
SCENARIOS = [{"match": "[subscribe]", "turns": [{"done": {"status": "pass", "reason": "The form is shown."}}]}]


@pytest.fixture(scope="module")
def a11y_run(tmp_path_factory: pytest.TempPathFactory, site: DemoSite) -> Iterator[CliRun]:
    with scripted_run(tmp_path_factory.mktemp("a11y"), site, MANIFEST, SCENARIOS, "--concurrency", "2") as run:
        yield run


def test_an_unlabeled_input_fails_at_serious_with_rule_impact_element_and_help(a11y_run: CliRun) -> None:
    assert a11y_run.exit_code == 1, a11y_run.stderr
    t = a11y_run.test("unlabeled input")
    assert t["status"] == "failed", t
    assert t["reason"] == (
        "expectation accessibility failed: expected no accessibility violation of impact serious or above (axe-core "
        "4.12.1), found 1 rule(s) violated: label (critical) on 1 element(s), first '#newsletter-email': Form elements "
        "must have labels"
    )
    assert "the agent said pass: The form is shown." in t["causes"]
    report = (a11y_run.out / "report.html").read_text(encoding="utf-8")
    assert "label (critical) on 1 element(s), first &#39;#newsletter-email&#39;: Form elements must have labels" in report


def test_a_clean_page_passes(a11y_run: CliRun) -> None:
    t = a11y_run.test("labeled input")
    assert t["status"] == "passed", t
    assert [(e["check"], e["ok"], e["found"]) for e in t["expectations"]] == [("accessibility", True, "none")]


def test_skipped_rules_and_excluded_selectors_are_not_counted(a11y_run: CliRun) -> None:
    assert a11y_run.test("unlabeled input, label rule skipped")["status"] == "passed"
    assert a11y_run.test("unlabeled input, form excluded")["status"] == "passed"
