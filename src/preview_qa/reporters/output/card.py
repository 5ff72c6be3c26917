"""A failure as a reviewer reads it in ten seconds: the reason, what failed (once), the evidence that matters, the steps
in words, and the files to open. Plain data; the Markdown and JUnit reporters each render it."""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlsplit

from preview_qa.reporters.output.files import EVENTS, test_dir
from preview_qa.results import (
    REASON_LIMIT,
    ExpectationOutcome,
    StepInWords,
    StepStatus,
    TestResult,
    agent_said_pass_line,
    check_line,
    evidence_lines,
    one_line,
)

EVIDENCE_SHOWN = 3
VIOLATING_ELEMENTS_SHOWN = 5  # the first elements of the counted accessibility violations; the rest in report.html


@dataclass(frozen=True)
class FailedCheck:
    check: str
    expected: str
    found: str
    waited: str  # "5 s", or "" for a check that does not wait (data)


@dataclass(frozen=True)
class StepLine:
    number: int
    did: str  # the step's actions in words, "; " between them
    page: str  # where it ended, only when that changed from the step before ("" otherwise)
    error: str | None
    not_run: list[str]
    went_wrong: bool  # the step the reader should look at first


@dataclass(frozen=True)
class TestStepLine:
    """One test step of a test written as steps, as the card lists it: `step 2 of 4 'Open the cart': failed: ...`."""

    __test__ = False
    words: str  # step 2 of 4 'Open the cart'
    outcome: str  # "passed (replay, agent steps 3-5)", "failed: expected ...", "not run"
    failed: bool  # the step the test failed or errored at


@dataclass
class FailureCard:
    headline: str
    checks: list[FailedCheck] = field(default_factory=list)
    accessibility: list[str] = field(default_factory=list)  # the first violating elements, each with what axe measured
    accessibility_more: int = 0  # violating elements left to report.html and results.json
    agent: str | None = None  # the agent's own report, when it is part of the story and not the headline
    causes: list[str] = field(default_factory=list)  # what else the verdict gave, in its words
    evidence: list[str] = field(default_factory=list)  # at most EVIDENCE_SHOWN
    evidence_more: int = 0  # browser errors left in events.jsonl
    steps: list[StepLine] = field(default_factory=list)
    test_steps: list[TestStepLine] = field(default_factory=list)  # a test written as steps: each one, how it ended
    agent_step_word: str = ""  # "agent step " in a test written as steps: its agent steps' numbers run on across goals
    drift: str | None = None  # a replay that stopped matching the app: the step and what changed
    folder: str = ""  # the test's folder in the results (the uploaded artifact)
    screenshots: list[tuple[str, str]] = field(default_factory=list)  # (file in that folder, what it shows), first first
    other_runs: list[str] = field(default_factory=list)  # earlier attempts, the baseline: how each ended


def failure_card(test: TestResult, base_url: str = "") -> FailureCard:
    """The card of a failed or errored test, from its result alone (its steps in words included)."""
    failed = [e for e in test.expectations if not e.ok]
    told = {check_line(e) for e in failed} | set(evidence_lines(test.evidence))
    report = test.agent_report or {}
    report_reason = one_line(str(report.get("reason") or ""), REASON_LIMIT)
    headline = test.reason
    if failed and test.reason == check_line(failed[0]):  # the table says it; the headline says how many
        headline = f"{len(failed)} expectation(s) failed on the final page"
    at = next((s for s in test.step_results if s.status in FAILED_STEP), None) if test.written_as_steps else None
    own = [e for e in failed if at is not None and e.check.startswith(f"step {at.index} ")]
    if at is not None and own and at.reason.startswith("expectation "):  # its checks failed: the table says which
        headline = f"{at.words(len(test.step_results))}: {len(own)} expectation(s) failed once its page had settled"
    agent = None
    if report_reason and f"agent: {report_reason}" != test.reason:
        agent = f"The agent reported {report.get('status') or 'no status'}: {report_reason}"
        told.add(agent_said_pass_line(report_reason))
    card = FailureCard(
        headline=headline,
        agent=agent,
        drift=test.replay_drift,
        causes=[c for c in test.causes if c not in told and c != test.replay_drift],
        folder=test_dir(test.name),
    )
    card.checks = [
        FailedCheck(e.check, e.expected, e.found, f"{e.waited_s:.1f} s" if e.waited_s is not None else "") for e in failed
    ]
    card.accessibility, card.accessibility_more = _violating_elements(failed)
    card.evidence, card.evidence_more = _evidence(test)
    # In a test written as steps, the step that failed is named already: an agent step went wrong only if it failed.
    card.steps = _steps(test.steps_in_words, base_url, last_is_wrong=not test.written_as_steps)
    marked = next((s for s in test.steps_in_words if s.number in {line.number for line in card.steps if line.went_wrong}), None)
    shots = [(marked.screenshot, f"step {marked.number}")] if marked and marked.screenshot else []
    if test.written_as_steps:
        card.test_steps, card.agent_step_word = _test_steps(test), "agent step "
        shots = [(s.screenshot, s.words(len(test.step_results))) for s in [at] if s is not None and s.screenshot]
        shots += [(marked.screenshot, f"agent step {marked.number}")] if marked is not None and marked.screenshot else []
    if failed and at is None and isinstance(final := test.artifacts.get("final_screenshot"), str):
        shots.append((final, "the page the checks read"))  # a failed step's own picture is the page its checks read
    if test.replay_drift:
        shots += [
            (str(test.artifacts[k]), what)
            for k, what in (("replay_drift_recorded", "the step as recorded"), ("replay_drift_live", "the step as it is now"))
            if isinstance(test.artifacts.get(k), str)
        ]
    if shots:
        card.folder = shots[0][0].rpartition("/")[0]  # with retries, the last attempt's folder
    card.screenshots = [(path.rpartition("/")[2], what) for path, what in shots]
    card.other_runs = [
        f"Attempt {a.attempt or n} of {test.attempts}: {a.status.value}: {a.reason}"
        for n, a in enumerate(test.earlier_attempts, start=1)
    ]
    if test.baseline is not None:
        card.other_runs.append(f"On the baseline: {test.baseline.status.value}: {test.baseline.reason}")
    return card


def card_text(card: FailureCard) -> str:
    """The card as plain text (JUnit's failure body): the same facts, in the same order."""
    lines = [card.headline]
    if card.checks:
        lines += [
            "Failed checks:",
            *[
                f"- {c.check}: expected {c.expected}, found {c.found}{f' (waited {c.waited})' if c.waited else ''}"
                for c in card.checks
            ],
        ]
    if card.accessibility:
        more = [f"- and {card.accessibility_more} more in report.html"] if card.accessibility_more else []
        lines += ["Accessibility:", *[f"- {a}" for a in card.accessibility], *more]
    lines += [card.agent] if card.agent else []
    lines += [f"- {c}" for c in card.causes]
    if card.drift:
        lines.append(f"Replay: {card.drift} (the agent took over)")
    if card.evidence:
        more = [f"- and {card.evidence_more} more in {EVENTS}"] if card.evidence_more else []
        lines += ["Evidence:", *[f"- {e}" for e in card.evidence], *more]
    if card.test_steps:
        lines.append("Test steps:")
        lines += [f"- {s.words}: {s.outcome}{'   ← failed here' if s.failed else ''}" for s in card.test_steps]
    if card.steps:
        lines.append("Agent steps:" if card.agent_step_word else "Steps:")
        for step in card.steps:
            lines.append(
                f"{card.agent_step_word}{step.number}. {step.did}{f' → {step.page}' if step.page else ''}"
                f"{'   ← went wrong' if step.went_wrong else ''}"
            )
            lines += [f"   error: {step.error}"] if step.error else []
            lines += [f"   {n}" for n in step.not_run]
    lines += card.other_runs
    if card.screenshots:
        lines.append(f"Open {card.folder}/: " + ", ".join(f"{f} ({what})" for f, what in card.screenshots))
    return "\n".join(lines)


FAILED_STEP = (StepStatus.FAILED, StepStatus.ERRORED)


def _test_steps(test: TestResult) -> list[TestStepLine]:
    """Each test step and how it ended; the one the test failed at says why."""
    total, lines = len(test.step_results), []
    for step in test.step_results:
        if step.status is StepStatus.NOT_RUN:
            outcome = "not run"
        elif step.status is StepStatus.PASSED:
            how = [step.execution.value] if step.execution is not None else []
            how += [f"agent steps {step.agent_steps[0]}-{step.agent_steps[1]}"] if step.agent_steps else []
            outcome = "passed" + (f" ({', '.join(how)})" if how else "")
        else:  # its reason is the card's headline: said once
            outcome = step.status.value + (f" ({step.execution.value})" if step.execution is not None else "")
        lines.append(TestStepLine(step.words(total), outcome, step.status in FAILED_STEP))
    return lines


def _violating_elements(failed: list[ExpectationOutcome]) -> tuple[list[str], int]:
    """`color-contrast: 'a > span' ('Tutorial'): contrast 2.32:1, #aaaaaa on #ffffff, ...`: the first elements of the
    violations that failed the test, and how many more there are."""
    lines = [f"{v.rule}: {e.line()}" for check in failed for v in check.violations if v.counted for e in v.elements]
    return lines[:VIOLATING_ELEMENTS_SHOWN], max(0, len(lines) - VIOLATING_ELEMENTS_SHOWN)


def _evidence(test: TestResult) -> tuple[list[str], int]:
    ev = test.evidence
    shown = [
        f"{label}: {first}"
        for first, label in (
            (ev.first_page_error, "Page error"),
            (ev.first_failed_request, "Failed request"),
            (ev.first_console_error, "Console error"),
        )
        if first
    ]
    total = ev.page_errors + ev.failed_requests + ev.console_errors
    return shown[:EVIDENCE_SHOWN], max(0, total - len(shown[:EVIDENCE_SHOWN]))


def _steps(steps: list[StepInWords], base_url: str, last_is_wrong: bool = True) -> list[StepLine]:
    """Numbered steps; the one that went wrong is the first whose actions failed, else the last (where it ended)."""
    wrong = next((s.number for s in steps if s.error), steps[-1].number if steps and last_is_wrong else None)
    lines, page = [], None
    for step in steps:
        shown = _page(step.page, base_url)
        lines.append(
            StepLine(
                step.number,
                "; ".join(step.actions) or "Did nothing",
                shown if shown != page else "",
                step.error,
                step.not_run,
                step.number == wrong,
            )
        )
        page = shown
    return lines


def _page(url: str, base_url: str) -> str:
    """The page by its path when it is on the preview, else the whole URL."""
    parts, base = urlsplit(url), urlsplit(base_url)
    if base.netloc and parts.netloc == base.netloc and parts.scheme == base.scheme:
        return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return url
