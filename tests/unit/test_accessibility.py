"""expect.accessibility without a browser: the manifest keys, the impact threshold and what a failure says it found."""

from __future__ import annotations

import html
from pathlib import Path

import pytest
from pydantic import ValidationError

from preview_qa.manifest.models import Accessibility, Expectations, Impact
from preview_qa.reporters.github.markdown import card_markdown
from preview_qa.reporters.html import HtmlReporter
from preview_qa.reporters.output.card import card_text, failure_card
from preview_qa.results import AccessibilityViolation, RunResult, Status, ViolatingElement, check_line
from preview_qa.verdict.agent_run import AgentRun, DoneReport
from preview_qa.verdict.checks.accessibility import accessibility_outcome
from preview_qa.verdict.decide import decide
from tests.builders import result, spec
from tests.fakes.github import rendered, visible


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


def contrast_element(target: str, text: str, ratio: float, fg: str) -> ViolatingElement:
    data: dict[str, str | float | int | bool] = {
        "fgColor": fg,
        "bgColor": "#ffffff",
        "contrastRatio": ratio,
        "fontSize": "12.0pt (16px)",
        "fontWeight": "normal",
        "messageKey": "",
        "expectedContrastRatio": "4.5:1",
    }
    return ViolatingElement(target=target, text=text, summary="Fix any of the following: ...", data=data)


LINKS = AccessibilityViolation(
    rule="color-contrast",
    impact="serious",
    help="Elements must meet minimum color contrast ratio thresholds",
    elements=[
        contrast_element(".linkLabel_WmDU", "Tutorial", 2.32, "#aaaaaa"),
        *(contrast_element(f"a:nth-child({n}) > .linkLabel_WmDU", f"Link {n}", 2.12, "#b2b2b2") for n in range(2, 8)),
    ],
)


def test_a_contrast_finding_names_the_element_its_text_ratio_colours_font_and_the_ratio_due() -> None:
    first = LINKS.elements[0]
    assert first.measured() == "contrast 2.32:1, #aaaaaa on #ffffff, 12.0pt (16px) normal, 4.5:1 expected"
    assert first.line() == "'.linkLabel_WmDU' ('Tutorial'): " + first.measured()
    other = ViolatingElement(target="#q", data={"messageKey": "x", "role": "textbox"})
    assert (other.measured(), other.line()) == ("role textbox", "'#q': role textbox")
    assert ViolatingElement(target="img").line() == "'img'"


def test_the_outcome_keeps_every_violation_and_element_and_the_reason_names_the_first_with_its_data() -> None:
    outcome = accessibility_outcome(Accessibility(), [LINKS, REGION], "4.12.1")
    assert [(v.rule, v.counted, len(v.elements)) for v in outcome.violations] == [
        ("color-contrast", True, 7),
        ("region", False, 1),
    ]
    assert outcome.found == (
        "1 rule(s) violated: color-contrast (serious) on 7 element(s), first '.linkLabel_WmDU' ('Tutorial') [contrast "
        "2.32:1, #aaaaaa on #ffffff, 12.0pt (16px) normal, 4.5:1 expected]: Elements must meet minimum color contrast "
        "ratio thresholds (1 rule(s) below serious not counted)"
    )
    assert "violations" not in accessibility_outcome(Accessibility(), [], "4.12.1").model_dump()  # none: left out


def test_the_failure_card_lists_the_first_five_elements_and_counts_the_rest() -> None:
    outcome = accessibility_outcome(Accessibility(), [LINKS, REGION], "4.12.1")
    failed = result(status=Status.FAILED, reason=check_line(outcome), expectations=[outcome])
    card = failure_card(failed)
    assert card.accessibility == [f"color-contrast: {e.line()}" for e in LINKS.elements[:5]]
    assert card.accessibility_more == 2
    text = card_text(card)
    assert "Accessibility:\n- color-contrast: '.linkLabel_WmDU' ('Tutorial'): contrast 2.32:1" in text
    assert "- and 2 more in report.html" in text
    comment = visible(rendered(card_markdown(failed, str, "http://x")))
    assert "color-contrast: '.linkLabel_WmDU' ('Tutorial'): contrast 2.32:1, #aaaaaa on #ffffff" in comment
    assert "and 2 more in report.html" in comment


def test_report_html_shows_every_element_with_what_axe_measured(tmp_path: Path) -> None:
    outcome = accessibility_outcome(Accessibility(), [LINKS, REGION], "4.12.1")
    failed = result(status=Status.FAILED, reason=check_line(outcome), expectations=[outcome])
    page = html.unescape(
        HtmlReporter(tmp_path).render(RunResult(manifest="qa.yml", base_url="http://x", started_at="now", tests=[failed]))
    )
    assert "Accessibility findings" in page
    for e in LINKS.elements:
        assert f'<td class="mono">{e.target}</td><td>{e.text}</td><td>{e.measured()}</td>' in page
    assert "below the threshold: not counted" in page and "body > p" in page
