"""`explore`'s outputs: results.json (the findings, each with its repro), findings.md ("This PR breaks N things", then
what main has too, then the unconfirmed, folded), and that Markdown in the job summary in GitHub Actions. Page and
server text is escaped as every Markdown we write escapes it."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from preview_qa.reporters.github.commands import annotation
from preview_qa.reporters.github.explore_section import explore_markdown
from preview_qa.reporters.github.reporter import SUMMARY_LIMIT, append_to
from preview_qa.reporters.output.files import FINDINGS
from preview_qa.results import ExploreResult, one_line
from preview_qa.secrets.safe_stderr import inert


def write(result: ExploreResult, out: Path, env: Mapping[str, str]) -> None:
    """The files, and findings.md in the job summary: shortened, saying where the whole file is, past GitHub's limit."""
    text = write_files(result, out)
    if len(text.encode()) > SUMMARY_LIMIT:
        text = explore_markdown(result, SUMMARY_LIMIT, full=str(out / FINDINGS))
    failed = append_to(env, "GITHUB_STEP_SUMMARY", text)
    if failed:
        print(annotation("warning", failed, title="preview-qa"), flush=True)


def write_files(result: ExploreResult, out: Path) -> str:
    """results.json, the manifests its runs ran and findings.md (returned) in `out`: `explore`'s, or `run --explore`'s
    explore/ (the artifacts reporter's)."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(result.model_dump_json(indent=2) + "\n", encoding="utf-8")
    for name, text in result.manifests.items():  # what each run's results name as their manifest
        (out / name).write_text(text, encoding="utf-8")
    text = explore_markdown(result)
    (out / FINDINGS).write_text(text, encoding="utf-8")
    return text


def told(result: ExploreResult, findings: Path) -> list[str]:
    """What the console says of an exploration: each break, page not compared and charter's report on a line of its
    own, inert (no page or LLM text starts a workflow command), then the count and where findings.md is."""
    lines = [f"breaks: {f.kind.value} on {f.url}: {f.summary}" for f in result.breaks]
    lines += [f"not compared: {page}: {why}" for page, why in result.uncompared.items()]
    lines += [f"charter: {page}: {what}" for page, what in result.charters.items()]
    lines = [inert(one_line(line, 500)) for line in lines]
    return [*lines, f"explore: {len(result.breaks)} new confirmed finding(s) on {len(result.pages)} page(s); see {findings}"]
