"""The job summary and the PR comment in GitHub's Markdown (as cmark-gfm renders it): the table, a card per failure,
untrusted text made inert, the whole cut to a size."""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from typing import Any

from preview_qa.reporters.github.plan_section import plan_markdown
from preview_qa.reporters.junit import clean
from preview_qa.reporters.output.card import StepLine, TestStepLine, failure_card
from preview_qa.reporters.output.files import DRIFT_LIVE, DRIFT_RECORDED, test_dir
from preview_qa.reporters.output.proofs import flagged_tests, proof_counts
from preview_qa.results import RunResult, Status, TestResult, one_line

SourceLink = Callable[[str, int], str | None]  # a manifest file and line -> its URL on GitHub, or None
CELL_LIMIT = 300
FLAGGED_SHOWN = 10  # vacuous and weak tests listed in the summary's head (--prove); the rest in results.json
CARDS_OPEN = 3  # failure cards shown open; the rest are folded under one <details> that says how many
TABLE_HEAD = "| | Test | Reason | Duration | Agent steps | Run |\n|:-:|---|---|--:|--:|---|\n"
EMOJI = {Status.PASSED: "✅", Status.FAILED: "❌", Status.ERRORED: "⚠️", Status.SKIPPED: "⏭️"}
# `:` too, which breaks every GFM autolink with a scheme (http://, mailto:, xmpp:); `www.` gets the same escape below.
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]~|!:])")
_WWW = re.compile(r"(www)\.", re.IGNORECASE)
# An e-mail address or an @mention: cmark-gfm autolinks an address even with its `@` escaped (`\@`, `&#64;`), and
# GitHub links mentions in any text but code; in a code span neither happens, and the text copies as it is.
_ADDRESS = re.compile(r"([\w.+%-]*@[\w.-]*\w)")  # split() keeps each address at an odd index


def md_cell(text: str, limit: int = CELL_LIMIT) -> str:
    """Untrusted text as inert Markdown on one line: no HTML, no links (autolinks included) or emphasis, no @mentions
    nor e-mail autolinks (each address in a code span), no table breaks, no control characters."""
    line = one_line(clean(text), limit)
    parts = _ADDRESS.split(line) if "@" in line else [line]  # the split backtracks over every word: only when needed
    return "".join(f"`{part}`" if index % 2 else _inert(part) for index, part in enumerate(parts))


def _inert(text: str) -> str:
    return _WWW.sub(r"\1\\.", _MARKDOWN_SPECIAL.sub(r"\\\1", html.escape(text, quote=False)))


def render_markdown(
    run: RunResult, relative: Callable[[str], str], run_url: str | None, limit: int, link: SourceLink | None = None
) -> str:
    """The table of tests, failed and errored first and the green ones folded, and a card per failure (the first
    CARDS_OPEN open, the rest folded), cut (with a note) before `limit` UTF-8 bytes; `link` gives a manifest line's URL."""
    head = _head(run, relative)
    tests = sorted(run.tests, key=lambda t: -t.status.rank)  # worst first, else manifest order (as report.html)
    red = [_row(t) for t in tests if not t.status.is_green]
    green = [t for t in tests if t.status.is_green]
    failures = [card_markdown(t, relative, run.base_url, link) for t in tests if not t.status.is_green]
    drifts = [
        f"- {md_cell(t.name, 120)}: {md_cell(t.replay_drift)} (the recorded and the live page: "
        f"{md_cell(f'{test_dir(t.name)}/{DRIFT_RECORDED}, {DRIFT_LIVE}')})\n"
        for t in run.tests
        if t.replay_drift and t.status.is_green
    ]  # a failure's card tells its own drift
    evidence = "Screenshots, event logs and results.json: " + (
        f"[the run's artifacts]({run_url}#artifacts)." if run_url else "the results folder."
    )
    items = [(TABLE_HEAD, "heading")] if red else []
    items += [(row, "row") for row in red]
    if green:
        counts = ", ".join(f"{EMOJI[s]} {n} {s.value}" for s in (Status.PASSED, Status.SKIPPED) if (n := run.count(s)))
        items += [(f"\n<details><summary>{counts}</summary>\n\n{TABLE_HEAD}", "fold")]
        items += [(_row(t), "row") for t in green] + [("\n</details>\n", "unfold")]
    items += [(block, "heading") for block in [_groups(run)] if block]
    items += [("\n#### Failures\n", "heading")] if failures else []
    items += [(block, "failure") for block in failures[:CARDS_OPEN]]
    folded = failures[CARDS_OPEN:]
    if folded:
        items += [(f"\n<details><summary>{len(folded)} more failure(s), folded</summary>\n", "fold")]
        items += [(block, "failure") for block in folded] + [("\n</details>\n", "unfold")]
    items += [("\n#### Replays that drifted (the agent took over)\n", "heading")] if drifts else []
    items += [(line, "drift") for line in drifts]
    items += [(plan_markdown(run.plan, md_cell), "plan")] if run.plan else []  # `run --plan` (issue #39)
    text = "\n".join(head) + "\n"
    budget = limit - 600 - len(evidence.encode())  # the cut note and the evidence line always fit
    size = len(text.encode())
    folded_open = False  # inside a <details> when cut: it is closed after the note
    for index, (part, kind) in enumerate(items):
        size += len(part.encode())
        if size > budget:
            rest = [kind for _, kind in items[index:]]
            drifts_left = f" and {rest.count('drift')} more replay drift(s)" if rest.count("drift") else ""
            text += (
                f"\n_Cut here to stay within GitHub's size limit: {rest.count('row')} more test row(s) and "
                f"{rest.count('failure')} more failure detail(s){drifts_left} are in results.json._\n"
            )
            text += "\n</details>\n" if folded_open else ""
            break
        text += part
        folded_open = {"fold": True, "unfold": False}.get(kind, folded_open)
    return text + f"\n{evidence}\n"


def _head(run: RunResult, relative: Any) -> list[str]:
    """The summary's first lines: the run's status and counts, the healed tests, its notices."""
    counts = " · ".join(f"{run.count(s)} {s.value}" for s in Status if run.count(s)) or "no tests"
    counts += f" · {len(run.healed)} healed (replay drifted, the agent passed)" if run.healed else ""
    counts += f" · {len(run.fell_back)} fell back to the agent (not healed)" if run.fell_back else ""
    counts += f" · {len(run.unverified)} on the agent's word (unverified)" if run.unverified else ""
    head = [
        f"### {EMOJI[run.status]} preview-qa: {run.status.value}",
        f"**{counts}** of {len(run.tests)} test(s) from {md_cell(relative(run.manifest))} against "
        f"{md_cell(run.base_url)} in {run.duration_s:.1f} s",
        "",
    ]
    if run.healed:
        names = ", ".join(md_cell(t.name, 120) for t in run.healed)
        head += [
            f"🩹 **Healed: {len(run.healed)}**: {names} (the replay drifted and the agent passed instead; "
            "`--fail-on healed` or `heal: false` make that fail)",
            "",
        ]
    if run.unverified:
        names = ", ".join(md_cell(t.name, 120) for t in run.unverified[:FLAGGED_SHOWN])
        more = f" and {len(run.unverified) - FLAGGED_SHOWN} more" if len(run.unverified) > FLAGGED_SHOWN else ""
        head += [
            f"🗣️ **On the agent's word: {len(run.unverified)}**: {names}{more} (passed with no text the agent quoted "
            "found on a page and no page check of their own; add an `expect` on what the app shows, or "
            "`--fail-on unverified` makes that fail)",
            "",
        ]
    head += _proofs(run)
    for notice in (run.notice, run.baseline_error):
        if notice:
            head += ["> [!WARNING]", f"> {md_cell(notice, 1000)}", ""]
    return head


def _row(test: TestResult) -> str:
    return (
        f"| {EMOJI[test.status]} | {md_cell(test.name, 120)}{_marks(test)} | {md_cell(test.reason)} | {test.duration_s:.1f} s "
        f"| {test.steps} | {md_cell(test.how_run)} |\n"
    )


def _proofs(run: RunResult) -> list[str]:
    """With --prove: how the proofs ended, and each vacuous or weak test with the mutation it survived and what to add."""
    counts = proof_counts(run)
    if not counts:
        return []
    lines = [f"🧪 **Proofs** (each passing test replayed against mutations of the preview): {md_cell(counts)}", ""]
    flagged = flagged_tests(run)
    for t in flagged[:FLAGGED_SHOWN]:
        lines.append(f"- **{md_cell(t.name, 120)}** is {t.verdict.value}: {md_cell(t.finding, 500)}. {md_cell(t.advice)}")
    lines += [f"- and {len(flagged) - FLAGGED_SHOWN} more in results.json"] if len(flagged) > FLAGGED_SHOWN else []
    return [*lines, ""] if flagged else lines


def card_markdown(test: TestResult, relative: Callable[[str], str], base_url: str, link: SourceLink | None = None) -> str:
    """One failed or errored test as a card: prose that wraps (no fenced block), a small table of the failed checks,
    the steps as a numbered list; every untrusted string through md_cell; its file:line a link when `link` has one."""
    card = failure_card(test, base_url)
    where = md_cell(f"{relative(test.file)}:{test.line}") if test.file else ""
    url = link(test.file, test.line) if link is not None and where else None
    where = f"[{where}]({url})" if url else where
    parts = [
        f"{EMOJI[test.status]} **{md_cell(test.name, 120)}**{f' · {where}' if where else ''}",
        f"**{md_cell(card.headline, 500)}**",
    ]
    if card.checks:
        parts.append(
            "\n".join(
                [
                    "| Check | Expected | Found | Waited |",
                    "|---|---|---|--:|",
                    *[
                        f"| {md_cell(c.check, 60)} | {md_cell(c.expected)} | {md_cell(c.found)} | {md_cell(c.waited)} |"
                        for c in card.checks
                    ],
                ]
            )
        )
    if card.accessibility:
        more = [f"- and {card.accessibility_more} more in report.html"] if card.accessibility_more else []
        parts.append("Accessibility:\n\n" + "\n".join([*(f"- {md_cell(a)}" for a in card.accessibility), *more]))
    parts += [md_cell(card.agent, 500)] if card.agent else []
    parts += ["\n".join(f"- {md_cell(c, 500)}" for c in card.causes)] if card.causes else []
    parts += [f"Replay: {md_cell(card.drift)} (the agent took over)"] if card.drift else []
    if card.evidence:
        more = [f"- and {card.evidence_more} more in events.jsonl"] if card.evidence_more else []
        parts.append("Evidence:\n\n" + "\n".join([*(f"- {md_cell(e)}" for e in card.evidence), *more]))
    if card.test_steps:  # a test written as steps: which one broke, then its agent steps as "agent step 5"
        lines = [
            f"- {'❌ **' if s.failed else ''}{md_cell(s.words, 200)}{'**' if s.failed else ''}: {md_cell(s.outcome)}"
            for s in card.test_steps
        ]
        parts.append("Test steps:\n\n" + "\n".join(lines))
        parts += ["Agent steps:\n\n" + "\n".join(_step(s, "- agent step ") for s in card.steps)] if card.steps else []
    else:
        parts += ["Steps:\n\n" + "\n".join(_step(s) for s in card.steps)] if card.steps else []
    parts += ["\n".join(f"- {md_cell(r, 500)}" for r in card.other_runs)] if card.other_runs else []
    if card.screenshots:
        # The folder and file names are our own slugs (letters, digits, dashes): safe in a code span.
        files = ", ".join(f"`{name}` ({what})" for name, what in card.screenshots)
        parts.append(f"Open `{card.folder}/` in the run's artifacts: {files}.")
    return "\n" + "\n\n".join(parts) + "\n"


def _test_step(step: TestStepLine) -> str:
    """`- step 1 of 4 'Log in': passed (replay, agent steps 1-2)`; the one the test failed at marked and in bold."""
    words = md_cell(step.words, 200)
    return f"- ❌ **{words}**: {md_cell(step.outcome)}" if step.failed else f"- {words}: {md_cell(step.outcome)}"


def _step(step: StepLine, word: str = "") -> str:
    """`3. Clicked ...` in a numbered list; in a test written as steps, `- agent step 5: Clicked ...`."""
    text = md_cell(step.did)
    line = (f"{word}{step.number}: " if word else f"{step.number}. ") + (f"❌ **{text}**" if step.went_wrong else text)
    line += f" → {md_cell(step.page, 200)}" if step.page else ""
    extra = ([f"error: {md_cell(step.error)}"] if step.error else []) + [md_cell(n) for n in step.not_run]
    return line + "".join(f"<br>{e}" for e in extra)


def _marks(test: TestResult) -> str:
    return "".join(f" · _{md_cell(m, 100)}_" for m in test.marks)


def _groups(run: RunResult) -> str:
    """Whether a red test is this pull request's fault: regressions, failing on the baseline too, and flaky tests."""
    groups = [
        ("🔴 Regressions (they pass on the baseline)", run.regressions),
        ("🟠 Failing on the baseline too", [t for t in run.tests if t.fails_on_baseline_too]),
        ("🟡 Flaky (passed after a retry)", run.flaky),
    ]
    if run.baseline_url:
        groups.insert(
            2,
            (
                "⚪ Not confirmed on the baseline (it errored there, or did not run)",
                [t for t in run.tests if not t.status.is_green and not t.regression and not t.fails_on_baseline_too],
            ),
        )
    elif not run.flaky:
        return ""
    text = "\n#### Compared with the baseline\n" if run.baseline_url else "\n#### Flaky tests\n"
    if run.baseline_url:
        text += f"Failed and errored tests ran once more on {md_cell(run.baseline_url)}.\n"
    for title, tests in groups:
        if tests:
            names = ", ".join(md_cell(t.name, 120) for t in tests)
            text += f"\n**{title}: {len(tests)}**: {names}\n"
    return text
