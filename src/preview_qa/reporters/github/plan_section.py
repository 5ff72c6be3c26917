"""The PR comment's folded "Changed routes with no test" (issue #39): each route and its changed files as inert text,
and the drafts that passed their trial as a YAML block to paste, fenced so that no page text can close it."""

from __future__ import annotations

import re
from collections.abc import Callable

from preview_qa.results import PlanSummary

YAML_LIMIT = 20_000  # characters of drafts shown; past it the block would crowd the comment (plan.yml holds them all)
_BACKTICKS = re.compile(r"`+")


def plan_markdown(plan: PlanSummary, md_cell: Callable[[str, int], str]) -> str:
    """The folded section, every untrusted text through `md_cell` (markdown.py's, which calls this); empty when the
    change touched no route left without a test."""
    if not plan.routes:
        return ""
    lines = [f"\n<details><summary>Changed routes with no test: {len(plan.routes)}</summary>\n"]
    for route in plan.routes:
        files = f" (changed: {md_cell(', '.join(route.files), 200)})" if route.files else ""
        note = f": {md_cell(route.note, 200)}" if route.note else ""
        lines.append(f"- {md_cell(route.route, 120)}{files}{note}")
    lines += ["", *[f"_{md_cell(note, 300)}_" for note in plan.notes]] if plan.notes else []
    if plan.yaml and len(plan.yaml) <= YAML_LIMIT:
        lines += ["", "Drafts that ran once on this preview and passed, to review and paste into the manifest:", ""]
        lines += fenced(plan.yaml, "yaml")
    elif plan.yaml:
        lines += ["", "The drafts that passed are too long to show here: see plan.yml in the results folder."]
    if plan.dropped:
        lines += ["", "Drafts not proposed (one that failed may have found a regression this PR brought):", ""]
        lines += [f"- {md_cell(name, 120)}: {md_cell(why, 300)}" for name, why in plan.dropped.items()]
    return "\n".join(lines) + "\n\n</details>\n"


def fenced(text: str, info: str) -> list[str]:
    """`text` as a code block whose fence is longer than any run of backticks in it: no text inside can close it."""
    fence = "`" * max(3, 1 + max((len(run) for run in _BACKTICKS.findall(text)), default=0))
    return [f"{fence}{info}", text.rstrip("\n"), fence]
