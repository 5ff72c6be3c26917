"""expect.console_errors, expect.requests and expect.links end to end (#68, 4): exact steps in real Chromium, no LLM; each
fails on a page with its problem, with the problem in the reason, and holds on a clean page; every test's result
keeps the problems its pages showed (results.json's `problems`), and the links of a links check (`links`)."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from preview_qa.demo.scripted_llm import ScriptedLLM
from tests.conftest import CliRun, clean_env, preview_qa_run, scripted_run
from tests.site import DemoSite
from tests.site.page_problems import ABOUT_ERROR, BREAK, HELP_ERROR

pytestmark = pytest.mark.e2e

ALL = "{console_errors: none, requests: {failed: none}, links: {broken: none}}"
MANIFEST = f"""
version: 1
tests:
  - name: clean
    steps: [{{open: /problems/clean}}]
    expect: {ALL}
  - name: console error
    steps: [{{open: /problems/console}}]
    expect: {{console_errors: none}}
  - name: uncaught
    steps: [{{open: /problems/throws}}]
    expect: {{console_errors: none}}
  - name: broken image
    steps: [{{open: /problems/broken-image}}]
    expect: {{requests: {{failed: none}}}}
  - name: broken image allowed
    steps: [{{open: /problems/broken-image}}]
    expect: {{requests: {{failed: none, allow: [/problems/img/*, /problems/api/*]}}}}
  - name: broken link
    steps: [{{open: /problems/links}}]
    expect: {{links: {{broken: none}}}}
  - name: no problem check
    steps: [{{open: /problems/broken-image}}]
"""


@pytest.fixture(scope="module")
def problems_run(tmp_path_factory: pytest.TempPathFactory, site: DemoSite) -> Iterator[CliRun]:
    with scripted_run(tmp_path_factory.mktemp("problems"), site, MANIFEST, None, "--concurrency", "3") as run:
        yield run


def test_a_clean_page_passes_all_three_and_its_links_are_kept(problems_run: CliRun) -> None:
    t = problems_run.test("clean")
    assert t["status"] == "passed", t
    assert [(e["check"], e["ok"], e["found"]) for e in t["expectations"]] == [
        ("console_errors", True, "none"),
        ("requests", True, "none"),
        ("links", True, "none"),
    ]
    assert t["problems"] == [] and t["path"] == "exact"
    # same-origin, rendered, deduped, in page order; the sign-out, off-site and fragment-only links are not requested
    assert t["links"] == ["/problems/clean", "/problems/about?tab=team", "/problems/moved"]
    assert problems_run.llm is None


def test_a_console_error_and_an_uncaught_exception_fail_with_the_message_and_page(problems_run: CliRun) -> None:
    logged, thrown = problems_run.test("console error"), problems_run.test("uncaught")
    assert (logged["status"], thrown["status"]) == ("failed", "failed")
    assert logged["reason"] == (
        "expectation console_errors failed: expected no uncaught exception or console error on a page of the app, "
        f"found 1: console error '{HELP_ERROR}' on /problems/console"
    )
    assert thrown["reason"] == (
        "expectation console_errors failed: expected no uncaught exception or console error on a page of the app, "
        "found 1: uncaught \"TypeError: Cannot read properties of undefined (reading 'render')\" on /problems/throws"
    )
    (problem,) = thrown["problems"]
    assert (problem["kind"], problem["page"], problem["target"]) == ("page_error", "/problems/throws", None)
    junit = problems_run.junit
    assert any(HELP_ERROR in str(case.result[0].message) for suite in junit for case in suite if case.result)


def test_a_failed_image_and_fetch_fail_requests_unless_allowed(problems_run: CliRun) -> None:
    t = problems_run.test("broken image")
    assert t["status"] == "failed", t
    assert t["reason"] == (
        "expectation requests failed: expected no failed request to the app's origin, found 2: "
        "GET /problems/img/anvil.png answered 404 (image); GET /problems/api/metrics answered 404 (fetch)"
    )
    assert problems_run.test("broken image allowed")["status"] == "passed"
    found = problems_run.test("broken image allowed")["expectations"][0]["found"]
    assert found == "none (2 allowed, not counted)"


def test_a_broken_link_fails_links_and_a_hidden_one_is_not_requested(problems_run: CliRun, site: DemoSite) -> None:
    t = problems_run.test("broken link")
    assert t["status"] == "failed", t
    assert t["reason"] == (
        "expectation links failed: expected no broken link among the final page's 4 link(s) to the app's own pages, "
        "found 1: link 'Team' to /problems/team answered 404"
    )
    assert [(p["kind"], p["page"], p["target"], p["status"]) for p in t["problems"]] == [
        ("broken_link", "/problems/links", "/problems/team", 404)
    ]
    assert "/problems/old-team" not in t["links"]
    assert "/problems/old-team" not in site.requests and "/problems/logout" not in site.requests  # hidden, sign-out


def test_every_test_keeps_the_problems_its_pages_showed(problems_run: CliRun) -> None:
    t = problems_run.test("no problem check")
    assert t["status"] == "passed" and t["links"] == []
    assert [(p["kind"], p["page"], p["target"], p["status"], p["resource_type"]) for p in t["problems"]] == [
        ("broken_image", "/problems/broken-image", "/problems/img/anvil.png", 404, "image"),
        ("http_error", "/problems/broken-image", "/problems/api/metrics", 404, "fetch"),
    ]


def test_links_are_requested_with_the_runs_basic_auth(tmp_path: Path) -> None:
    """Behind basic auth (--http-credentials), each link's request carries it: the links answer, not 401."""
    (tmp_path / "qa.yml").write_text(
        textwrap.dedent("""
        version: 1
        tests:
          - name: clean
            steps: [{open: /problems/clean}]
            expect: {links: {broken: none}}
        """)
    )
    env = clean_env(PREVIEW_QA_HTTP_CREDENTIALS="preview:s3cret-pass")
    with DemoSite(basic_auth=("preview", "s3cret-pass")) as site:
        run = preview_qa_run(tmp_path / "qa.yml", site.url, tmp_path / "out", None, env=env)
    t = run.test("clean")
    assert (t["status"], t["expectations"][0]["found"]) == ("passed", "none"), run.stdout
    assert t["links"] == ["/problems/clean", "/problems/about?tab=team", "/problems/moved"]


REPLAYED = """
version: 1
defaults: {max_steps: 3, timeout: 120}
tests:
  - name: about
    start: /problems/clean
    heal: false
    task: "[about] Open About and check it is shown."
    expect: {url: /problems/about, console_errors: none, requests: {failed: none}, links: {broken: none}}
"""
OPENS_ABOUT = [
    {
        "match": "[about]",
        "turns": [{"actions": [{"click": {"element": "About"}}]}, {"done": {"status": "pass", "reason": "About shows."}}],
    }
]


def test_a_replay_is_judged_by_the_problem_checks_on_its_own_run(tmp_path: Path, site: DemoSite) -> None:
    """The agent's run passes and is recorded; once the about page logs an error, its replay fails on it."""
    (tmp_path / "qa.yml").write_text(textwrap.dedent(REPLAYED))
    cache = ("--cache", str(tmp_path / "cache"))
    env = clean_env()
    del env["PREVIEW_QA_NO_CACHE"]
    with ScriptedLLM(OPENS_ABOUT) as llm:
        first = preview_qa_run(tmp_path / "qa.yml", site.url, tmp_path / "agent", llm, *cache, env=env)
        assert (first.test("about")["status"], first.test("about")["path"]) == ("passed", "agent"), first.stdout
        site.signals.give(BREAK)
        calls = len(llm.calls)
        second = preview_qa_run(tmp_path / "qa.yml", site.url, tmp_path / "replay", llm, *cache, env=env)
        assert len(llm.calls) == calls  # judged by code alone: no page check, no agent
    t = second.test("about")
    assert (t["status"], t["path"]) == ("failed", "replayed"), second.stdout
    assert t["reason"] == (
        "the replay did not pass (expectation console_errors failed: expected no uncaught exception or console error on "
        f"a page of the app, found 1: console error '{ABOUT_ERROR}' on /problems/about); heal: false, so the agent did "
        "not take over"
    )
    assert [(p["kind"], p["page"]) for p in t["problems"]] == [("console_error", "/problems/about")]
