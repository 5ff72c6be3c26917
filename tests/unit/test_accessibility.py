"""expect.accessibility without a browser: the manifest keys, the impact threshold and what a failure says it found."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from preview_qa.manifest.models import Accessibility, Expectations, Impact
from preview_qa.results import AccessibilityViolation, Status, ViolatingElement
from preview_qa.verdict.accessibility import accessibility_outcome
from preview_qa.verdict.agent_run import AgentRun, DoneReport
from preview_qa.verdict.decide import decide
from tests.builders import spec

def violation(rule: str, impact: str | None, help: str, *targets: str) -> AccessibilityViolation:
    return AccessibilityViolation(rule=rule, impact=impact, help=help, elements=[ViolatingElement(target=t) for t in targets])


LABEL = violation("label", "critical", "Form elements must have labels", "#newsletter-email", "#q")
CONTRAST = violation("color-contrast", "serious", "Elements must meet minimum color contrast ratio", ".muted")
REGION = violation("region", "moderate", "All page content should be contained by landmarks", "body > p")


def test_the_manifest_reads_impact_names_and_refuses_others() -> None:
    expect = Expectations.model_validate(
        {"accessibility": {"impact": "moderate", "skip_rules": ["color-contrast"], "exclude": ["#chat-widget"]}}
    )
    assert expect.accessibility == Accessibility(impact=Impact.MODERATE, skip_rules=["color-contrast"], exclude=["#chat-widget"])
    assert Expectations.model_validate({"accessibility": {}}).accessibility == Accessibility(impact=Impact.SERIOUS)
    with pytest.raises(ValidationError, match="minor', 'moderate', 'serious' or 'critical'"):
        Expectations.model_validate({"accessibility": {"impact": "severe"}})
    with pytest.raises(ValidationError, match="Extra inputs"):
        Expectations.model_validate({"accessibility": {"rules": ["label"]}})


@pytest.mark.parametrize(("threshold", "ok"), [("minor", False), ("moderate", False), ("serious", True), ("critical", True)])
def test_a_violation_counts_at_or_above_the_chosen_impact(threshold: str, ok: bool) -> None:
    outcome = accessibility_outcome(Accessibility(impact=Impact(threshold)), [REGION], "4.12.1")
    assert outcome.ok is ok
    assert outcome.expected == f"no accessibility violation of impact {threshold} or above (axe-core 4.12.1)"


def test_each_failing_rule_is_listed_with_impact_count_element_and_help() -> None:
    outcome = accessibility_outcome(Accessibility(), [LABEL, CONTRAST, REGION], "4.12.1")
    assert not outcome.ok
    assert outcome.found == (
        "2 rule(s) violated: label (critical) on 2 element(s), first '#newsletter-email': Form elements must have "
        "labels; color-contrast (serious) on 1 element(s), first '.muted': Elements must meet minimum color contrast "
        "ratio (1 rule(s) below serious not counted)"
    )


def test_an_unknown_impact_fails_closed() -> None:
    odd = violation("new-rule", None, "Something new", "div")
    assert not accessibility_outcome(Accessibility(impact=Impact.CRITICAL), [odd], "4.12.1").ok


def test_a_clean_page_passes_and_says_so() -> None:
    outcome = accessibility_outcome(Accessibility(), [], "4.12.1")
    assert outcome.ok and outcome.found == "none"


def test_a_failed_accessibility_check_fails_a_pass_with_its_rules_in_the_reason() -> None:
    outcome = accessibility_outcome(Accessibility(), [LABEL], "4.12.1")
    run = AgentRun(done=DoneReport(text='{"status": "pass", "reason": "Subscribed."}', success=True), expectations=[outcome])
    verdict = decide(spec(expect={"accessibility": {}}), run).verdict
    assert verdict.status is Status.FAILED
    assert verdict.reason.startswith(
        "expectation accessibility failed: expected no accessibility violation of impact "
        "serious or above (axe-core 4.12.1), found 1 rule(s) violated: label (critical)"
    )
