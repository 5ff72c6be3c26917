"""`explore`'s outputs: results.json (the findings, each with its repro), findings.md ("This PR breaks N things", then
what main has too, then the unconfirmed, folded), and that Markdown in the job summary in GitHub Actions. Page and
server text is escaped as every Markdown we write escapes it."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import yaml

from preview_qa.reporters.github.commands import annotation
from preview_qa.reporters.github.markdown import md_cell
from preview_qa.reporters.github.plan_section import fenced
from preview_qa.reporters.github.reporter import append_to
from preview_qa.results import ExploreResult, Finding


def write(result: ExploreResult, out: Path, env: Mapping[str, str]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(result.model_dump_json(indent=2) + "\n", encoding="utf-8")
    for name, text in result.manifests.items():  # what each run's results name as their manifest
        (out / name).write_text(text, encoding="utf-8")
    text = markdown(result)
    (out / "findings.md").write_text(text, encoding="utf-8")
    failed = append_to(env, "GITHUB_STEP_SUMMARY", text)
    if failed:
        print(annotation("warning", failed, title="preview-qa"), flush=True)


def markdown(result: ExploreResult) -> str:
    breaks = _alike(result.breaks)
    main = [f for f in result.findings if f.on_baseline]
    unconfirmed = [f for f in result.findings if not f.on_baseline and not f.confirmed]
    lines = [f"## This PR breaks {len(breaks)} thing{'' if len(breaks) == 1 else 's'}", ""]
    lines += [f"Explored {len(result.pages)} page(s) on the preview and the baseline in {result.duration_s:g} s.", ""]
    for same in breaks:  # one fault on many pages (a shared template): one line, one repro
        f, more = same[0], len(same) - 1
        also = f" and {more} more page(s) ({md_cell(', '.join(g.url for g in same[1:6]), 200)})" if more else ""
        lines += [f"- **{f.kind.value}** on {md_cell(f.url)}{also}: {md_cell(f.summary)}", *_repro(f)]
    for title, group in ((f"Also on main ({len(main)})", main), (f"Unconfirmed ({len(unconfirmed)})", unconfirmed)):
        if group:
            lines += ["", "<details><summary>" + title + "</summary>", ""]
            lines += [f"- {f.kind.value} on {md_cell(f.url)}: {md_cell(f.summary)} ({md_cell(f.reason)})" for f in group]
            lines += ["", "</details>"]
    if result.uncompared:
        lines += ["", f"**{len(result.uncompared)} page(s) could not be compared**, so this is not a pass:", ""]
        lines += [f"- {md_cell(page)}: {md_cell(why)}" for page, why in result.uncompared.items()]
    lines += ["", *(f"- {md_cell(n)}" for n in result.notes), ""]
    return "\n".join(lines)


def _alike(findings: list[Finding]) -> list[list[Finding]]:
    groups: dict[tuple[str, str], list[Finding]] = {}
    for f in findings:
        groups.setdefault((f.kind.value, f.summary), []).append(f)
    return list(groups.values())


def _repro(f: Finding) -> list[str]:
    """The repro as YAML to paste under `tests:`, folded."""
    text = yaml.safe_dump([f.repro], sort_keys=False)
    return [
        "",
        "  <details><summary>repro</summary>",
        "",
        *(f"  {line}" for line in "\n".join(fenced(text, "yaml")).splitlines()),
        "",
        "  </details>",
        "",
    ]
