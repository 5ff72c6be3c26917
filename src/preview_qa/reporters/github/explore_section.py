"""What `explore` found, in GitHub's Markdown: "This PR breaks N things" (each finding on one line with its evidence and
its repro as YAML in a fold, ready to paste), then "Also on main" and "Unconfirmed" folded, then the pages not compared
and why. One text for findings.md, the job summary and the PR comment; every page, server and LLM text through
`md_cell`, the repros in fences no text can close; cut to a size with a note of what
is left out, never silently."""

from __future__ import annotations

from typing import Any

from preview_qa.reporters.github.markdown import md_cell
from preview_qa.reporters.github.plan_section import fenced
from preview_qa.reporters.output.findings import Grouped, repro_yaml
from preview_qa.results import ExploreResult, Finding

EVIDENCE_LIMIT = 300  # characters of each evidence value shown; results.json keeps it whole
ALSO_SHOWN = 5  # the other pages one fault is on, named in its line


def explore_markdown(
    result: ExploreResult,
    limit: int | None = None,
    heading: str = "##",
    full: str = "findings.md",
) -> str:
    """The section; with `limit`, cut before that many UTF-8 bytes with a note that says how many findings and pages
    are left out and that `full` (the whole findings.md) has them."""
    items = _items(result, heading)
    if limit is None:
        return "".join(text for text, _ in items)
    text, size, folded = "", 0, False
    budget = limit - 400  # the note always fits
    for index, (part, kind) in enumerate(items):
        size += len(part.encode())
        if size > budget:
            rest = [kind for _, kind in items[index:]]
            left = rest.count("finding")
            pages = rest.count("page")
            also = f" and {pages} page(s) not compared" if pages else ""
            text += f"\n_{left} more finding(s){also} in the artifacts ({md_cell(full, 200)}): cut here to stay "
            text += "within GitHub's size limit._\n"
            return text + ("\n</details>\n" if folded else "")
        text += part
        folded = {"fold": True, "unfold": False}.get(kind, folded)
    return text


def _items(result: ExploreResult, heading: str) -> list[tuple[str, str]]:
    """The section's blocks in order, each with what it is: a finding, a page not compared, a fold's start or end."""
    grouped = Grouped.of(result)
    n, usage = len(grouped.breaks), result.usage
    cost = f", ${usage.cost_usd:.4f}" if usage.cost_usd is not None else ""
    spent = f", {usage.llm_calls} LLM call(s){cost}" if usage.llm_calls else ""  # the charters' and their repros'
    items = [
        (f"{heading} This PR breaks {n} thing{'' if n == 1 else 's'}\n\n", "head"),
        (f"Explored {len(result.pages)} page(s) on the preview and the baseline in {result.duration_s:g} s{spent}.\n\n", "head"),
    ]
    for same in grouped.breaks:  # one fault on many pages (a shared template): one line, one repro
        f, more = same[0], len(same) - 1
        shown = ", ".join(g.url for g in same[1 : 1 + ALSO_SHOWN])
        also = f" and {more} more page(s) ({md_cell(shown, 200)}{', …' if more > ALSO_SHOWN else ''})" if more else ""
        line = f"- **{f.kind.value}** on {md_cell(f.url, 200)}{also}: {md_cell(f.summary, 300)}\n"
        items.append((line + _evidence(f) + _repro(f.repro), "finding"))
    folds = (
        (f"Also on main ({len(grouped.on_main)})", grouped.on_main),
        (f"Unconfirmed ({len(grouped.unconfirmed)})", grouped.unconfirmed),
    )
    for title, group in folds:
        if group:
            items.append((f"\n<details><summary>{title}</summary>\n\n", "fold"))
            items += [
                (f"- {f.kind.value} on {md_cell(f.url, 200)}: {md_cell(f.summary, 300)} ({md_cell(f.reason, 300)})\n", "finding")
                for f in group
            ]
            items.append(("\n</details>\n", "unfold"))
    if result.uncompared:
        items.append((f"\n**{len(result.uncompared)} page(s) could not be compared**, so this is not a pass:\n\n", "head"))
        items += [(f"- {md_cell(page, 200)}: {md_cell(why, 300)}\n", "page") for page, why in result.uncompared.items()]
    items += [("\n_Notes:_\n\n" + "".join(f"- {md_cell(n, 300)}\n" for n in result.notes), "note")] if result.notes else []
    return items


def _evidence(f: Finding) -> str:
    """`  - evidence: target: … · screenshot: …`, under its finding's line (a message its line says already left out)."""
    shown = {k: str(v) for k, v in f.evidence.items() if v and str(v) != f.summary}
    said = " · ".join(f"{md_cell(k, 40)}: {md_cell(v, EVIDENCE_LIMIT)}" for k, v in shown.items())
    return f"  - evidence: {said}\n" if said else ""


def _repro(test: dict[str, Any]) -> str:
    """The repro as YAML to paste under `tests:`, folded under its finding."""
    block = "\n".join(f"  {line}" for line in "\n".join(fenced(repro_yaml(test), "yaml")).splitlines())
    return f"\n  <details><summary>repro</summary>\n\n{block}\n\n  </details>\n\n"
