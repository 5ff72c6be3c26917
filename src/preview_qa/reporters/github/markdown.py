"""The job summary and the PR comment in GitHub's Markdown (as cmark-gfm renders it): untrusted text made inert, the
whole cut to a size."""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence
from typing import Any

from preview_qa.reporters.junit import clean, details
from preview_qa.reporters.output.files import DRIFT_LIVE, DRIFT_RECORDED, test_dir
from preview_qa.results import RunResult, Status, TestResult, clip, one_line

CELL_LIMIT = 300
DETAIL_LIMIT = 4_000
EMOJI = {Status.PASSED: "✅", Status.FAILED: "❌", Status.ERRORED: "⚠️", Status.SKIPPED: "⏭️"}
# `:` too, which breaks every GFM autolink with a scheme (http://, mailto:, xmpp:); `www.` gets the same escape below.
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]~|!:])")
_WWW = re.compile(r"(www)\.", re.IGNORECASE)


def md_cell(text: str, limit: int = CELL_LIMIT) -> str:
    """Untrusted text as inert Markdown on one line: no HTML, no links (autolinks included) or emphasis, no @mentions
    (nor e-mail autolinks), no table breaks, no control characters."""
    text = _MARKDOWN_SPECIAL.sub(r"\\\1", html.escape(one_line(clean(text), limit), quote=False))
    return _WWW.sub(r"\1\\.", text).replace("@", "@\u200b")


def html_text(text: str, limit: int = 200) -> str:
    """Untrusted text inside an HTML element (a raw HTML block: never autolinked), where Markdown escapes would show:
    entities only, no @mentions, no control characters."""
    return html.escape(one_line(clean(text), limit)).replace("@", "@\u200b")


def code_block(text: str) -> str:
    """Untrusted multi-line text in a fence longer than any backtick run inside it, so it cannot close the fence."""
    text = clip(clean(text), DETAIL_LIMIT)
    fence = "`" * max(3, max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    return f"{fence}text\n{text}\n{fence}"


def render_markdown(run: RunResult, relative: Any, run_url: str | None, limit: int,
                    steps: Mapping[str, Sequence[str]] | None = None) -> str:
    """The table of tests and the failures' details (with each failure's steps, if given), cut (with a note) before
    `limit` UTF-8 bytes."""
    counts = " · ".join(f"{run.count(s)} {s.value}" for s in Status if run.count(s)) or "no tests"
    counts += f" · {len(run.healed)} healed (replay drifted, the agent passed)" if run.healed else ""
    head = [f"### {EMOJI[run.status]} preview-qa: {run.status.value}",
            f"**{counts}** of {len(run.tests)} test(s) from {md_cell(relative(run.manifest))} against "
            f"{md_cell(run.base_url)} in {run.duration_s:.1f} s", ""]
    if run.healed:
        names = ", ".join(md_cell(t.name, 120) for t in run.healed)
        head += [f"🩹 **Healed: {len(run.healed)}**: {names} (the replay drifted and the agent passed instead; "
                 "`--fail-on healed` or `heal: false` make that fail)", ""]
    for notice in (run.notice, run.baseline_error):
        if notice:
            head += ["> [!WARNING]", f"> {md_cell(notice, 1000)}", ""]
    head += ["| | Test | Reason | Duration | Steps |", "|:-:|---|---|--:|--:|"]
    rows = [f"| {EMOJI[t.status]} | {md_cell(t.name, 120)}{_marks(t)} | {md_cell(t.reason)} | {t.duration_s:.1f} s "
            f"| {t.steps} |" for t in run.tests]
    failures = [_detail(t, relative, (steps or {}).get(t.name, ())) for t in run.tests if not t.status.is_green]
    drifts = [f"- {md_cell(t.name, 120)}: {md_cell(t.replay_drift)} (the recorded and the live page: "
              f"{md_cell(f'{test_dir(t.name)}/{DRIFT_RECORDED}, {DRIFT_LIVE}')})\n" for t in run.tests if t.replay_drift]
    evidence = ("Screenshots, event logs and results.json: "
                + (f"[the run's artifacts]({run_url}#artifacts)." if run_url else "the results folder."))
    items = [(row + "\n", "row") for row in rows]
    items += [(block, "heading") for block in [_groups(run)] if block]
    items += [("\n#### Failures\n", "heading")] if failures else []
    items += [(block, "failure") for block in failures]
    items += [("\n#### Replays that drifted (the agent took over)\n", "heading")] if drifts else []
    items += [(line, "drift") for line in drifts]
    text = "\n".join(head) + "\n"
    budget = limit - 600 - len(evidence.encode())  # the cut note and the evidence line always fit
    size = len(text.encode())
    for index, (part, _kind) in enumerate(items):
        size += len(part.encode())
        if size > budget:
            rest = [kind for _, kind in items[index:]]
            drifts_left = f" and {rest.count('drift')} more replay drift(s)" if rest.count("drift") else ""
            text += (f"\n_Cut here to stay within GitHub's size limit: {rest.count('row')} more test row(s) and "
                     f"{rest.count('failure')} more failure detail(s){drifts_left} are in results.json._\n")
            break
        text += part
    return text + f"\n{evidence}\n"


def _marks(test: TestResult) -> str:
    return "".join(f" · _{md_cell(m, 100)}_" for m in test.marks)


def _groups(run: RunResult) -> str:
    """Whether a red test is this pull request's fault: regressions, failing on the baseline too, and flaky tests."""
    groups = [("🔴 Regressions (they pass on the baseline)", run.regressions),
              ("🟠 Failing on the baseline too", [t for t in run.tests if t.fails_on_baseline_too]),
              ("🟡 Flaky (passed after a retry)", run.flaky)]
    if run.baseline_url:
        groups.insert(2, ("⚪ Not confirmed on the baseline (it errored there, or did not run)",
                          [t for t in run.tests if not t.status.is_green and not t.regression
                           and not t.fails_on_baseline_too]))
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


def _detail(test: TestResult, relative: Any, steps: Sequence[str]) -> str:
    """One failure: collapsed, its summary line in HTML (Markdown is not rendered there), the story and the steps (each
    action naming its element) in a code block."""
    where = html_text(f"{relative(test.file)}:{test.line}")
    final = f"Final URL: {md_cell(test.final_url)}\n" if test.final_url else ""
    story = details(test) + ("\n\nSteps:\n" + "\n".join(steps) if steps else "")
    return (f"\n<details><summary>{EMOJI[test.status]} <b>{html_text(test.name)}</b> ({where})</summary>\n\n"
            f"{final}\n{code_block(story)}\n\n</details>\n")
