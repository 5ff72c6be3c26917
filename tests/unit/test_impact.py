"""`run --impacted`: a test without paths runs when the change touches a page its last passing recording visited; a
change that maps to no route runs every test; no recording, or --no-cache, runs the test; setup tests still run for
the tests that need them; each test left out says why; the changed routes no test visits are listed for the PR
comment. Played by the real runner with a fake agent (no browser)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from preview_qa.cli.plan import tell_plan
from preview_qa.config import RunConfig
from preview_qa.engine.agent_port import AgentRequest, Recording
from preview_qa.engine.runner import Runner
from preview_qa.engine.saved_state import BrowserState
from preview_qa.manifest.models import Manifest, TestSpec
from preview_qa.results import RunResult, Status
from preview_qa.secrets.redact import Redactor
from preview_qa.selection.impact import covered_by, impact
from preview_qa.selection.previews import Previews
from preview_qa.selection.repository import MemoryRepository
from preview_qa.selection.route import Route
from preview_qa.selection.select import NOT_CHANGED
from preview_qa.verdict.agent_run import AgentRun
from tests.builders import PASS, spec
from tests.conftest import run_in_process

ROUTES = {"src/products/**": ["/products/[id]"], "src/auth/**": ["/login"], "docs/**": []}
VISITS = {  # each test's recording: the preview it was recorded on, and the pages it loaded (another host's too)
    "Login": ["http://old-preview.test/login", "http://old-preview.test/dashboard"],
    "Buy": ["http://old-preview.test/", "http://old-preview.test/products/anvil", "https://cdn.example/products/x"],
    "Search": ["http://old-preview.test/search?q=a"],
}


def specs() -> list[TestSpec]:
    return [
        spec("Login", 1, save_state="user"),
        spec("Buy", 2, use_state="user"),
        spec("Search", 3),
        spec("New", 4),  # no recording yet
        spec("Docs", 5, paths=["docs/**"]),
    ]


async def agent(request: AgentRequest) -> AgentRun:
    if request.keep_state is not None:  # the login test saves its state
        request.keep_state(BrowserState({"cookies": [], "origins": []}))
    return AgentRun(done=PASS)


def impacted(changed: list[str], cached: bool = True, visits: dict[str, list[str]] | None = None) -> RunResult:
    """The runner over specs() with --impacted, `changed` and the recordings of `visits` (VISITS by default)."""
    seen = VISITS if visits is None else visits

    def recordings(spec: TestSpec, target: str = "preview") -> Recording | None:
        visited = seen.get(spec.name)
        return None if visited is None else Recording("http://old-preview.test", {}, visited=visited)

    manifest = Manifest(version=1, tests=specs(), routes=ROUTES)
    config = RunConfig(manifest=Path("qa.yml"), base_url="http://preview.test", chromium="/bin/true", changed_files=changed,
                       impacted=True)  # fmt: skip
    runner = Runner(manifest, config, {}, agent, lambda _e: None, Redactor({}), recordings if cached else None)
    return asyncio.run(runner.run())


def outcome(result: RunResult) -> dict[str, str]:
    return {t.name: t.status.value if t.status is not Status.SKIPPED else f"skipped: {t.reason}" for t in result.tests}


def test_a_products_change_runs_the_test_that_visits_a_product_page_and_the_login_it_starts_from() -> None:
    result = impacted(["src/products/price.ts"])
    assert outcome(result) == {
        "Login": "passed",  # a setup test: Buy starts from its saved login
        "Buy": "passed",
        "Search": "skipped: not impacted: it visits /search; the change touches /products/[id]",
        "New": "passed",  # no recording: which pages it visits is not known
        "Docs": "skipped: no changed file under its paths",  # paths decide
    }
    assert result.warnings == ["--impacted: no passing recording of New: it runs (a recording says which pages a test visits)"]
    assert result.plan is None or not result.plan.routes  # Buy's recording covers /products/[id]


def test_a_docs_only_change_touches_no_page() -> None:
    assert outcome(impacted(["docs/intro.md"])) == {
        "Login": "skipped: not impacted: it visits /login, /dashboard; the change touches no page",
        "Buy": "skipped: not impacted: it visits /, /products/anvil; the change touches no page",
        "Search": "skipped: not impacted: it visits /search; the change touches no page",
        "New": "passed",
        "Docs": "passed",
    }


def test_a_change_that_maps_to_no_route_runs_every_test_and_says_so() -> None:
    result = impacted(["src/products/price.ts", "package.json"])
    assert set(outcome(result).values()) == {"passed", f"skipped: {NOT_CHANGED}"}
    assert result.warnings == ["--impacted: changed files that map to no route (package.json): every test runs"]


def test_without_the_cache_every_test_runs() -> None:
    result = impacted(["src/auth/form.ts"], cached=False)
    assert set(outcome(result).values()) == {"passed", f"skipped: {NOT_CHANGED}"}
    assert result.warnings == ["--impacted with --no-cache: no recording is read, so every test runs"]


def test_the_changed_routes_no_test_visits_are_listed_for_the_pr_comment_pointing_at_plan() -> None:
    covered = impacted(["src/auth/form.ts"])
    assert covered.plan is not None and covered.plan.routes == []  # Login's recording visited /login
    result = impacted(["src/products/a.ts", "src/auth/form.ts"], visits={"Login": ["http://old-preview.test/login"]})
    assert result.plan is not None
    assert [(r.route, r.files, r.note) for r in result.plan.routes] == [
        ("/products/[id]", ["src/products/a.ts"], "no test starts on it or visits it: `preview-qa plan` drafts tests for it")
    ]
    assert (covered.plan.mapped, result.plan.mapped) == (1, 2)  # results.json said 0: "no changed file maps to a route"


def test_run_impacted_without_plan_lists_the_routes_and_says_nothing_of_drafts(capsys: pytest.CaptureFixture[str]) -> None:
    """`run --impacted` ended with "plan: no changed file maps to a route; nothing to draft." though its own skip
    reasons named the changed route, and no draft was asked for."""
    result = impacted(["src/products/a.ts", "src/auth/form.ts"], visits={"Login": ["http://old-preview.test/login"]})
    assert result.plan is not None
    tell_plan(result.plan, None, None, drafting=False)
    said = capsys.readouterr().err
    assert said.startswith("plan: /products/[id]: no test starts on it or visits it") and "nothing to draft" not in said


def previews(*routes: Route, **apps: str) -> Previews:
    return Previews(RunConfig(Path("qa.yml"), "http://preview.test", app_urls=apps), list(routes))


def test_coverage_compares_the_host_and_counts_a_recording_s_pages() -> None:
    elsewhere = [spec("Other host", start="https://other.example/products/1"), spec("Here", start="/about")]
    visited = {"Here": ["/about", "/orders/7"]}
    assert covered_by(Route("/products/[id]"), elsewhere, lambda t: visited.get(t.name), previews()) is None
    assert covered_by(Route("/about"), elsewhere, lambda t: None, previews()) == "test 'Here' starts there"
    on_preview = [spec("Abs", start="http://preview.test/products/2")]
    assert covered_by(Route("/products/[id]"), on_preview, lambda t: None, previews()) is not None
    found = covered_by(Route("/orders/[id]"), elsewhere, lambda t: visited.get(t.name), previews())
    assert found == "a recorded run of test 'Here' passed through it"


def test_in_a_monorepo_a_route_is_on_its_own_app_s_preview_and_only_its_tests_cover_it() -> None:
    """#65, 6: /about of apps/docs is not covered by a test of the web app's /about, and an app with no URL is on no
    preview when the change touches several apps."""
    web, docs, shop = Route("/about", app="apps/web"), Route("/about", app="apps/docs"), Route("/cart", app="apps/shop")
    named = previews(web, docs, shop, web="http://web.test", docs="http://docs.test")
    assert (named.of_route(web), named.of_route(docs), named.of_route(shop)) == ("http://web.test", "http://docs.test", None)
    assert "its app apps/shop has no preview URL of its own" in named.unknown(shop) and "--base-url shop=URL" in named.unknown(
        shop
    )
    tests = [spec("Web about", start="/about", app="web"), spec("Plain about", start="/about")]
    assert covered_by(web, tests, lambda t: None, named) == "test 'Web about' starts there"
    assert covered_by(docs, tests, lambda t: None, named) is None  # no test runs on the docs preview
    assert previews(shop).of_route(shop) == "http://preview.test"  # one app touched: the plain preview is its
    assert previews(Route("/x")).of_route(Route("/x")) == "http://preview.test"  # the repository's root app
    assert RunConfig(Path("q"), "http://p", app_urls={"apps/web": "http://w"}).url_of("web") == "http://w"


def test_a_layout_s_route_is_covered_by_a_test_of_a_page_under_it_and_says_which_page() -> None:
    layout = Route("/", under=True)  # a root layout or not-found page: every route
    tests = [spec("Pricing page", start="/pricing")]
    assert covered_by(layout, tests, lambda t: None, previews()) == "test 'Pricing page' starts on /pricing"  # not "/**"


def test_in_a_monorepo_a_skip_reason_names_the_app_whose_route_changed() -> None:
    next_app = {"package.json": '{"dependencies": {"next": "15.5.0"}}', "app/layout.tsx": "", "app/page.tsx": ""}
    repo = MemoryRepository({f"apps/{app}/{name}": text for app in ("web", "docs") for name, text in next_app.items()})
    config = RunConfig(Path("qa.yml"), "http://preview.test", app_urls={"web": "http://web.test", "docs": "http://docs.test"})
    docs_home = spec("Docs home", start="/", app="docs")
    found = impact([docs_home], ["apps/web/app/page.tsx"], {}, lambda t: ["/"], config, repo)
    assert found.skipped == {"Docs home": "not impacted: it visits /; the change touches / (apps/web)"}


def test_a_recording_s_pages_are_its_preview_s_paths() -> None:
    recording = Recording("http://old.test", {}, visited=["http://old.test/a?x=1", "https://cdn.test/b", "http://old.test/a"])
    assert recording.pages() == ["/a"]


@pytest.mark.parametrize("flag", [[], ["--changed-only"]])
def test_impacted_needs_the_changed_files(flag: list[str], tmp_path: Path) -> None:
    manifest = tmp_path / "qa.yml"
    manifest.write_text("version: 1\ntests: [{name: a, task: b}]\n", encoding="utf-8")
    done = run_in_process(["run", str(manifest), "--base-url", "http://127.0.0.1:9", "--impacted", *flag])
    if flag:  # outside a pull request the list cannot be had: every test would run, and it says so (no exit 2)
        assert "--changed-only: not in a GitHub Actions run" in done.stderr
    else:
        assert done.returncode == 2
        assert "--impacted needs the changed files: give --changed-files FILE (or -) or --changed-only." in done.stderr


def test_a_root_route_with_only_apps_previews_given_is_on_no_preview_and_says_which_url_is_missing() -> None:
    root = Route("/pricing")
    only_apps = Previews(RunConfig(Path("qa.yml"), None, app_urls={"web": "http://web.test"}), [root])
    assert only_apps.of_route(root) is None
    assert only_apps.unknown(root) == (
        "it is a route of the repository's root, and --base-url gave only apps' previews: give the plain one too"
    )
