"""Pure: axe-core's violations on the final page and the test's `expect.accessibility` -> one expectation outcome."""

from __future__ import annotations

from preview_qa.manifest.models import Accessibility, Impact
from preview_qa.results import AccessibilityViolation, ExpectationOutcome, clip

FOUND_LIMIT = 1500  # the found text lists every failing rule; past this, the rest are counted, not described


def counts(wanted: Accessibility, violation: AccessibilityViolation) -> bool:
    """Whether a violation is at or above the test's impact threshold."""
    try:
        impact = Impact(violation.impact or "")
    except ValueError:
        return True
    return impact.rank >= wanted.impact.rank


def accessibility_outcome(
    wanted: Accessibility, violations: list[AccessibilityViolation], axe_version: str
) -> ExpectationOutcome:
    """Fails on any violation at or above `wanted.impact`; `found` lists each with its rule, impact, count, first
    element (its text and what axe-core measured) and help, and the outcome keeps every violation with every element
    for the reports; violations below the threshold are counted in `found` so a reader knows they were seen."""
    marked = [v.model_copy(update={"counted": counts(wanted, v)}) for v in violations]
    failing = [v for v in marked if v.counted]
    below = len(marked) - len(failing)
    expected = f"no accessibility violation of impact {wanted.impact.value} or above (axe-core {axe_version})"
    if not failing:
        found = "none" + (f" ({below} rule(s) below {wanted.impact.value} not counted)" if below else "")
        return ExpectationOutcome(check="accessibility", expected=expected, found=found, ok=True, violations=marked)
    described = "; ".join(describe(v) for v in failing)
    if len(described) > FOUND_LIMIT:
        described = clip(described, FOUND_LIMIT)
    found = f"{len(failing)} rule(s) violated: {described}"
    if below:
        found += f" ({below} rule(s) below {wanted.impact.value} not counted)"
    return ExpectationOutcome(check="accessibility", expected=expected, found=found, ok=False, violations=marked)


def describe(v: AccessibilityViolation) -> str:
    """`color-contrast (serious) on 2 element(s), first 'a > span' ('Docs') [contrast 2.32:1, #aaaaaa on #ffffff,
    12.0pt (16px) normal, 4.5:1 expected]: Elements must meet minimum color contrast ratio thresholds`."""
    first = ""
    if v.elements:
        e = v.elements[0]
        measured = e.measured()
        first = f", first {e.named()}" + (f" [{measured}]" if measured else "")
    return f"{v.rule} ({v.impact or 'impact unknown'}) on {len(v.elements)} element(s){first}: {v.help}"
