"""`run --impacted` end to end (issue #48): a first run records which pages each test loads (its start, a redirect, the
final URL) into the replay cache; then a change to the products runs only the test that visits the product page, a
docs-only change runs none, and a change that maps to no route runs them all."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from preview_qa.demo.scripted_llm import ScriptedLLM
from tests.conftest import CliRun, clean_env, preview_qa_run
from tests.site import DemoSite

pytestmark = pytest.mark.e2e

MANIFEST = """\
version: 1
defaults: {max_steps: 3, timeout: 120}
tests:
  - {name: Products, start: /product, task: "[quick] Look at the product."}
  - {name: Help, start: /help, task: "[quick] Look at the help page."}
  - {name: Dashboard, start: /dashboard, task: "[quick] Look where the dashboard leads signed out."}
routes:
  src/products/**: /product
  src/auth/**: /login
  src/settings/**: /settings
  "docs/**": []
"""
SCENARIOS = [{"match": "[quick]", "turns": [{"done": {"status": "pass", "reason": "Looks right."}}]}]


@dataclass
class Runs:
    recorded: CliRun
    products: CliRun
    docs: CliRun
    unmapped: CliRun
    login: CliRun


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, site: DemoSite) -> Iterator[Runs]:
    folder = tmp_path_factory.mktemp("impacted")
    manifest = folder / "qa.yml"
    manifest.write_text(textwrap.dedent(MANIFEST), encoding="utf-8")
    env = clean_env()
    del env["PREVIEW_QA_NO_CACHE"]
    cache = ["--cache", str(folder / "cache")]

    def run(name: str, llm: ScriptedLLM, *changed: str) -> CliRun:
        listed = folder / f"{name}.txt"
        listed.write_text("".join(f"{c}\n" for c in changed), encoding="utf-8")
        extra = ["--impacted", "--changed-files", str(listed)] if changed else []
        return preview_qa_run(manifest, site.url, folder / name, llm, *cache, *extra, env=env)

    with ScriptedLLM(SCENARIOS) as llm:
        yield Runs(
            run("recorded", llm),
            run("products", llm, "src/products/price.ts", "src/settings/form.ts"),
            run("docs", llm, "docs/intro.md"),
            run("unmapped", llm, "docs/intro.md", "src/lib/util.ts"),
            run("login", llm, "src/auth/form.ts"),
        )


def outcome(run: CliRun) -> dict[str, str]:
    return {t["name"]: t["status"] if t["status"] != "skipped" else f"skipped: {t['reason']}" for t in run.results["tests"]}


def test_the_first_run_records_every_test(runs: Runs) -> None:
    assert runs.recorded.exit_code == 0, runs.recorded.stderr[-3000:]
    assert set(outcome(runs.recorded).values()) == {"passed"}


def test_a_products_change_runs_only_the_products_test_and_lists_the_routes_no_test_visits(runs: Runs) -> None:
    assert runs.products.exit_code == 0, runs.products.stderr[-3000:]
    touches = "the change touches /product, /settings"
    assert outcome(runs.products) == {
        "Products": "passed",
        "Help": f"skipped: not impacted: it visits /help; {touches}",
        "Dashboard": f"skipped: not impacted: it visits /dashboard, /login; {touches}",  # the redirect's hop too
    }
    plan = runs.products.results["plan"]  # the PR comment's "Changed routes with no test"
    assert [(r["route"], r["files"]) for r in plan["routes"]] == [("/settings", ["src/settings/form.ts"])]
    assert "`preview-qa plan` drafts tests for it" in plan["routes"][0]["note"]


def test_a_change_to_a_page_a_redirect_led_to_runs_the_test_that_was_led_there(runs: Runs) -> None:
    assert outcome(runs.login) == {
        "Products": "skipped: not impacted: it visits /product; the change touches /login",
        "Help": "skipped: not impacted: it visits /help; the change touches /login",
        "Dashboard": "passed",
    }


def test_a_docs_only_change_runs_no_test(runs: Runs) -> None:
    assert runs.docs.exit_code == 0, runs.docs.stderr[-3000:]
    assert {name: why.split(";")[-1] for name, why in outcome(runs.docs).items()} == {
        "Products": " the change touches no page",
        "Help": " the change touches no page",
        "Dashboard": " the change touches no page",
    }


def test_a_change_that_maps_to_no_route_runs_every_test_and_says_why(runs: Runs) -> None:
    assert set(outcome(runs.unmapped).values()) == {"passed"}
    said = "--impacted: changed files that map to no route (src/lib/util.ts): every test runs"
    assert runs.unmapped.results["warnings"] == [said]
    assert f"warning: {said}" in runs.unmapped.stdout
