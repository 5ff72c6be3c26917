"""Pure: what `explore` found, compared by what it is. A problem on a page of the preview is new when the baseline's
same page has none like it (the same kind, page and target, its message with numbers and ids folded; axe's rule and
element), `on_baseline` when it has; a new one counts only once its repro, an ordinary test, failed on the preview for
that check and passed on the baseline."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from preview_qa.results import Finding, FindingKind, Status, StepStatus, TestResult, clip

# What differs between two runs of the same fault: counts, ids, hashes, ports, times
_VARYING = re.compile(r"\b[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}\b|\b(?=[a-f]*\d)[0-9a-f]{6,}\b|\d+", re.IGNORECASE)

# The check whose failure is each kind's repro (as a test's `expect:` mapping), and the outcome's `check` name
REPRO_CHECKS: dict[FindingKind, tuple[dict[str, Any], str]] = {
    FindingKind.PAGE_ERROR: ({"console_errors": "none"}, "console_errors"),
    FindingKind.CONSOLE_ERROR: ({"console_errors": "none"}, "console_errors"),
    FindingKind.HTTP_ERROR: ({"requests": {"failed": "none"}}, "requests"),
    FindingKind.BROKEN_IMAGE: ({"requests": {"failed": "none"}}, "requests"),
    FindingKind.BROKEN_LINK: ({"links": {"broken": "none"}}, "links"),
    FindingKind.ACCESSIBILITY: ({"accessibility": {}}, "accessibility"),
}


_REQUESTS = {k for k, (_, check) in REPRO_CHECKS.items() if check == "requests"}

REPRO_NAMES = {
    FindingKind.PAGE_ERROR: "throws no uncaught exception",
    FindingKind.CONSOLE_ERROR: "logs no console error",
    FindingKind.HTTP_ERROR: "has no failed request",
    FindingKind.BROKEN_IMAGE: "has no broken image",
    FindingKind.BROKEN_LINK: "has no broken link",
    FindingKind.ACCESSIBILITY: "has no serious accessibility violation",
    FindingKind.VISUAL: "looks as on the baseline",
    FindingKind.AGENT: "does what the agent tried",
}


def fold(text: str) -> str:
    """The text with what varies from run to run (numbers, ids, hashes) as '#': two sightings of one fault match."""
    return _VARYING.sub("#", " ".join(text.split()))


@dataclass(frozen=True)
class Seen:
    """One thing wrong on one page of one side, as compared."""

    kind: FindingKind
    page: str
    summary: str  # one line for people: "GET /api/orders answered 500 (fetch)"
    key: str  # what it is, folded: equal on both sides for the same fault
    evidence: dict[str, Any] = field(default_factory=dict)
    test: dict[str, Any] | None = None  # its repro when it is not its kind's page check (an agent's finding's own)

    @property
    def repro(self) -> dict[str, Any]:
        return self.test if self.test is not None else repro(self.kind, self.page)

    @property
    def checks(self) -> set[str]:
        """The checks whose failure confirms it: its kind's, or those its own repro declares."""
        return {REPRO_CHECKS[self.kind][1]} if self.test is None else set(self.test["expect"])


def seen_on(page: str, result: TestResult, folder: str = "") -> list[Seen]:
    """What a sweep of `page` saw go wrong: the browser's problems and axe-core's counted violations, once each (its
    screenshot by its path from `folder`, the run's results folder)."""
    found: dict[str, Seen] = {}
    for p in result.problems:
        kind = FindingKind(p.kind.value)
        summary = p.message or f"{p.target} answered {p.status}"
        what = f"{fold(p.target)} {p.status}" if p.target is not None else fold(p.message)
        key = f"{kind.value} {page} {what}"
        said = {"message": p.message, **({"target": p.target} if p.target is not None else {})}
        found.setdefault(key, Seen(kind, page, clip(summary, 300), key, _evidence(result, said, folder)))
    for outcome in result.expectations:
        for v in outcome.violations if outcome.check == "accessibility" else []:
            if not v.counted:
                continue
            target = v.elements[0].target if v.elements else ""
            key = f"accessibility {page} {v.rule} {target}"
            summary = f"{v.rule} ({v.impact or 'impact unknown'}) on {len(v.elements)} element(s): {v.help}"
            found.setdefault(key, Seen(FindingKind.ACCESSIBILITY, page, clip(summary, 300), key, _evidence(result, {}, folder)))
    return list(found.values())


def _evidence(result: TestResult, said: dict[str, Any], folder: str) -> dict[str, Any]:
    """What was said, and the page's final screenshot by its path from the exploration's folder (`folder`: the run's
    own results folder in it)."""
    shot = result.artifacts.get("final_screenshot")
    return {**said, **({"screenshot": f"{folder}/{shot}" if folder else shot} if isinstance(shot, str) else {})}


def compared(preview: list[Seen], baseline: list[Seen]) -> list[tuple[Seen, bool]]:
    """Each thing seen on the preview, and whether the baseline showed the same (by key)."""
    there = {s.key for s in baseline}
    return [(s, s.key in there) for s in preview]


def repro(kind: FindingKind, page: str) -> dict[str, Any]:
    """The finding's repro as a manifest test: open the page, check what the finding says is broken. A visual change
    is told by `expect.visual` against the baseline (`--baseline-url`, `--fail-on visual`)."""
    checks = REPRO_CHECKS[kind][0] if kind in REPRO_CHECKS else {"visual": {}}
    return {"name": f"{page} {REPRO_NAMES[kind]}", "steps": [{"open": page}], "expect": checks}


def beside_old(seen: Seen, baseline: list[Seen]) -> Seen:
    """A new failed request on a page whose baseline fails others too: its repro allows those (`requests.allow`), so
    that it passes on the baseline and still fails on the preview for the new one. Other kinds as they are."""
    if REPRO_CHECKS.get(seen.kind, ({}, ""))[1] != "requests":
        return seen
    old = sorted({b.evidence["target"] for b in baseline if b.kind in _REQUESTS and "target" in b.evidence})
    if not old or seen.evidence.get("target") in old:
        return seen
    test = repro(seen.kind, seen.page)
    test["expect"] = {"requests": {"failed": "none", "allow": old}}
    return replace(seen, test=test)


def confirmation(seen: Seen, on_preview: TestResult | None, on_baseline: TestResult | None) -> tuple[bool, str]:
    """Whether the repro confirms a new finding: every step of it ran on the preview and then its own check failed,
    and it passed on the baseline; else why not (it errored, a step failed, as at a login wall or on an element that
    was never there, it failed for another cause, or failed on the baseline too)."""
    if on_preview is None or on_baseline is None:
        return False, "its repro did not run on both sides"
    stopped = next((s for s in on_preview.step_results if s.status is not StepStatus.PASSED), None)
    if stopped is not None:
        words = stopped.words(len(on_preview.step_results))
        return False, f"its repro did not get through its steps on the preview: {words} {stopped.status.value}"
    if not fails_for(seen, on_preview):
        checks = ", ".join(sorted(seen.checks))
        return False, f"its repro did not fail on the preview for {checks} ({on_preview.status.value}: {on_preview.reason})"
    if on_baseline.status is not Status.PASSED:
        return False, f"its repro did not pass on the baseline ({on_baseline.status.value}: {on_baseline.reason})"
    return True, f"its repro fails on the preview ({clip(on_preview.reason, 200)}) and passes on the baseline"


def fails_for(seen: Seen, run: TestResult | None) -> bool:
    """The repro's run failed for the finding's own check, after every one of its steps ran."""
    if run is None or run.status is not Status.FAILED:
        return False
    if any(s.status is not StepStatus.PASSED for s in run.step_results):
        return False
    return any(e.check.split(".")[0] in seen.checks and not e.ok for e in run.expectations)


def finding(seen: Seen, on_baseline: bool, confirmed: bool, reason: str) -> Finding:
    return Finding(
        kind=seen.kind,
        url=seen.page,
        summary=seen.summary,
        on_baseline=on_baseline,
        confirmed=confirmed,
        reason=reason,
        evidence=seen.evidence,
        repro=seen.repro,
    )
