"""Pure: axe-core's violations on the final page and the test's `expect.accessibility` -> one expectation outcome."""

from __future__ import annotations

from dataclasses import dataclass

from preview_qa.manifest.models import Accessibility, Impact
from preview_qa.results import ExpectationOutcome, clip

FOUND_LIMIT = 1500  # the found text lists every failing rule; past this, the rest are counted, not described
TARGET_LIMIT = 120


@dataclass(frozen=True)
class Violation:
    """One axe-core rule that failed on the page: its id, impact, help text (axe's own words) and the elements."""

    rule: str
    impact: str | None  # axe-core's impact name; None or an unknown name fails closed, as the most severe
    help: str
    targets: list[str]  # one CSS selector per failing element, as axe-core names it


def counts(wanted: Accessibility, violation: Violation) -> bool:
    """Whether a violation is at or above the test's impact threshold."""
    try:
        impact = Impact(violation.impact or "")
    except ValueError:
        return True
    return impact.rank >= wanted.impact.rank


def accessibility_outcome(wanted: Accessibility, violations: list[Violation], axe_version: str) -> ExpectationOutcome:
    """Fails on any violation at or above `wanted.impact`; lists each with its rule, impact, count, first element and
    help; violations below the threshold are counted so a reader knows they were seen."""
    failing = [v for v in violations if counts(wanted, v)]
    below = len(violations) - len(failing)
    expected = f"no accessibility violation of impact {wanted.impact.value} or above (axe-core {axe_version})"
    if not failing:
        found = "none" + (f" ({below} rule(s) below {wanted.impact.value} not counted)" if below else "")
        return ExpectationOutcome(check="accessibility", expected=expected, found=found, ok=True)
    described = "; ".join(describe(v) for v in failing)
    if len(described) > FOUND_LIMIT:
        described = clip(described, FOUND_LIMIT)
    found = f"{len(failing)} rule(s) violated: {described}"
    if below:
        found += f" ({below} rule(s) below {wanted.impact.value} not counted)"
    return ExpectationOutcome(check="accessibility", expected=expected, found=found, ok=False)


def describe(v: Violation) -> str:
    """`label` (critical) on 2 element(s), first `#email`: Form elements must have labels."""
    first = f", first {clip(v.targets[0], TARGET_LIMIT)!r}" if v.targets else ""
    return f"{v.rule} ({v.impact or 'impact unknown'}) on {len(v.targets)} element(s){first}: {v.help}"
