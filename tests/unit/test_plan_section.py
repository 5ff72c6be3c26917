"""The PR comment's "Changed routes with no test" as GitHub renders it (cmark-gfm): folded, every route and reason inert,
the drafts in a YAML block that no page text can close, link or mark up."""

from __future__ import annotations

import io
from pathlib import Path

from preview_qa.events import PlanFinished, RunFinished
from preview_qa.reporters.github.markdown import md_cell, render_markdown
from preview_qa.reporters.github.plan_section import plan_markdown
from preview_qa.reporters.github.reporter import COMMENT_FILE, GitHubReporter
from preview_qa.results import PlannedRoute, PlanSummary, RunResult
from preview_qa.secrets.redact import Redactor
from tests.fakes.github import rendered, visible

HOSTILE = "[click](https://evil.example) <img src=x onerror=alert(1)> @team **bold** ::error::pwned"
YAML = f"version: 1\ntests:\n  - name: a\n    task: '```\n</details> {HOSTILE}'\n"


def plan() -> PlanSummary:
    return PlanSummary(
        routes=[PlannedRoute(route=f"/x/{HOSTILE}", files=[f"app/{HOSTILE}.tsx"], note=HOSTILE)],
        yaml=YAML,
        dropped={f"draft {HOSTILE}": f"failed: {HOSTILE}"},
        notes=[f"changed files that map to no route: {HOSTILE}"],
    )


def test_the_section_is_folded_and_lists_the_routes() -> None:
    page = rendered(plan_markdown(plan(), md_cell), raw_html=True)
    assert page.count("<details>") == 1 and "Changed routes with no test: 1" in page
    assert "<a " not in page and "<img" not in page and "<strong>" not in page and 'class="user-mention"' not in page


def test_the_drafts_are_one_yaml_block_page_text_cannot_close() -> None:
    page = rendered(plan_markdown(plan(), md_cell), raw_html=True)
    assert page.count("<pre") == 1 and '<pre lang="yaml"><code>' in page
    block = page.split('<pre lang="yaml"><code>', 1)[1].split("</code>", 1)[0]
    assert visible(block) == YAML  # every line of it, the fence and </details> inside included, as written


def test_the_comment_carries_it_and_says_nothing_without_routes() -> None:
    run = RunResult(manifest="qa.yml", base_url="http://preview", started_at="now", plan=plan())
    assert "Changed routes with no test" in render_markdown(run, str, None, 60_000)
    assert plan_markdown(PlanSummary(), md_cell) == ""


def test_planning_after_the_tests_reaches_the_pr_comment(tmp_path: Path) -> None:
    reporter = GitHubReporter({"GITHUB_ACTIONS": "true"}, tmp_path, Redactor({}), comment=False, stream=io.StringIO())
    reporter.start()
    reporter.handle(RunFinished(result=RunResult(manifest="qa.yml", base_url="http://preview", started_at="now")))
    reporter.handle(PlanFinished(plan=plan()))
    reporter.finish()
    assert "<summary>Changed routes with no test: 1</summary>" in (tmp_path / COMMENT_FILE).read_text(encoding="utf-8")
