"""`preview-qa explore --write` (#68, 6) on the fixture pair: a starter suite drafted for the pages explored, as `plan`
drafts, with the scripted LLM answering the drafting requests. Only the drafts that passed on the preview and are not
vacuous are written; the file runs green with `preview-qa run`; an existing file is refused without --force."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from preview_qa.demo.scripted_llm import ScriptedLLM
from tests.conftest import clean_env, run_args, run_in_process
from tests.e2e.processes import closed_port
from tests.site.explore_pair import PairUrls

pytestmark = pytest.mark.e2e

DOCS_TEXT = "How to order: pick a product, add it to your cart, pay."
SEARCH = 'type "Rocket" into the search box and press Search'
DRAFTS = [
    {
        "name": "draft-docs",
        "match": "<route>/docs</route>",
        "drafts": [{"name": "The docs say how to order", "task": "Read the docs page.", "expect_text": [DOCS_TEXT]}],
    },
    {
        "name": "draft-search",
        "match": "<route>/search</route>",
        "drafts": [
            {
                "name": "Search finds the rocket skates",
                "task": f"On the search page, {SEARCH}.",
                "expect_text": ["Rocket skates"],
            },
            # vacuous: its URL holds the query even when the search's page answers 500
            {"name": "Search keeps the query", "task": f"Then {SEARCH}, and check the URL.", "expect_url": "q=Rocket"},
        ],
    },
]
TURNS = [
    {"name": "read-docs", "match": "Read the docs page", "turns": [{"done": {"status": "pass", "reason": "It says so."}}]},
    {
        "name": "search",
        "match": SEARCH,
        "turns": [
            {"actions": [{"input": {"element": "id=q", "text": "Rocket"}}]},
            {"actions": [{"click": {"element": "type=submit"}}]},
            {"done": {"status": "pass", "reason": "Rocket skates is listed."}},
        ],
    },
]


def test_explore_writes_a_starter_suite_of_the_drafts_that_pass_and_are_not_vacuous(
    explore_pair: PairUrls, tmp_path: Path
) -> None:
    suite, out = tmp_path / "qa.yml", tmp_path / "explore"
    suite.write_text("version: 1\n# an old file: --force overwrites it\n", encoding="utf-8")
    args = ["explore", "--base-url", explore_pair.pr, "--baseline-url", explore_pair.main, "--out", str(out)]
    args += ["--page", "/docs", "--page", "/search", "--max-pages", "2", "--max-charters", "0", "--write", str(suite)]
    with ScriptedLLM([*DRAFTS, *TURNS]) as llm:
        llm_args = ["--llm-base-url", llm.url, "--api-key", "k", "--model", "scripted"]
        explored = run_in_process([*args, *llm_args, "--force"], env=clean_env())
        assert explored.returncode == 0, explored.stdout + explored.stderr  # /docs and /search: alike on both sides
        assert "plan: dropped 'Search keeps the query': passed its trial run but is vacuous" in explored.stderr
        assert "plan: /search: 1 of 2 draft(s) passed their trial run and are not vacuous" in explored.stderr
        assert f"wrote {suite}" in explored.stderr
        written = suite.read_text(encoding="utf-8")
        assert written.startswith(f"# Drafted by `preview-qa explore --write` against {explore_pair.pr}:")
        assert "  # route: /docs (a page explore swept)" in written
        tests = yaml.safe_load(written)["tests"]
        assert [(t["name"], t["start"]) for t in tests] == [
            ("The docs say how to order", "/docs"),
            ("Search finds the rocket skates", "/search"),
        ]
        assert json.loads((out / "results.json").read_text(encoding="utf-8"))["pages"] == ["/docs", "/search"]

        ran = run_in_process(run_args(suite, explore_pair.pr, tmp_path / "run", llm), env=clean_env())
        assert ran.returncode == 0, ran.stdout + ran.stderr
        assert "2 passed" in ran.stdout

        again = run_in_process([*args, *llm_args], env=clean_env())
    assert again.returncode == 2
    assert f"{suite} already exists; nothing was written (--force overwrites it)" in again.stderr
    assert suite.read_text(encoding="utf-8") == written


def test_a_starter_suite_needs_the_llm_and_fails_when_no_draft_could_be_tried(explore_pair: PairUrls, tmp_path: Path) -> None:
    suite, out = tmp_path / "qa.yml", tmp_path / "explore"
    args = ["explore", "--base-url", explore_pair.pr, "--baseline-url", explore_pair.main, "--out", str(out)]
    args += ["--page", "/docs", "--max-pages", "1", "--max-charters", "0", "--write", str(suite)]
    no_key = run_in_process(args, env=clean_env())
    assert no_key.returncode == 2, no_key.stderr  # refused before any page is swept
    assert "OPENAI_API_KEY" in no_key.stderr and not out.exists()
    unpriced = run_in_process([*args, "--api-key", "k", "--model", "scripted", "--max-cost-usd", "1"], env=clean_env())
    assert unpriced.returncode == 2 and "--max-cost-usd cannot be enforced" in unpriced.stderr and not out.exists()
    down = run_in_process([*args, "--llm-base-url", f"http://127.0.0.1:{closed_port()}", "--api-key", "k"], env=clean_env())
    assert down.returncode == 1, down.stdout + down.stderr  # /docs breaks nothing: the suite that could not be drafted fails it
    assert "plan: nothing could be planned: the LLM did not answer" in down.stderr, down.stderr
    assert not suite.exists()
