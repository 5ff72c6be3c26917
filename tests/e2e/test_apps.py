"""A monorepo's apps with previews of their own (#65, 6): a test with `app:` runs on its app's preview (--base-url
NAME=URL, or the manifest's `apps:`), and a test whose app has no URL stops the run before anything starts, never run
on another app's preview. Exact steps only: no LLM is called."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import clean_env, run_in_process
from tests.site import DemoSite

pytestmark = pytest.mark.e2e

MANIFEST = """version: 1
apps:
  docs: http://docs.invalid
tests:
  - name: Shop home
    steps:
      - open: /
        expect: {text: Acme demo shop}
  - name: Docs help
    app: {app}
    start: /help
    steps:
      - click: {role: button, name: Got it}
    expect: {text: Thanks!}
"""


def run(
    tmp_path: Path, site: DemoSite, app: str, *urls: str, plain: bool = True, shop: str = ""
) -> tuple[int, str, dict[str, dict[str, object]]]:
    """`plain`: --base-url the site (the preview of tests without app:); `shop`: Shop home's app:, if any."""
    manifest = tmp_path / "qa.yml"
    text = MANIFEST.replace("{app}", app)
    manifest.write_text(text.replace("  - name: Shop home\n", f"  - name: Shop home\n    app: {shop}\n") if shop else text)
    out = tmp_path / "out"
    given = [*([site.url] if plain else []), *urls]
    args = ["run", str(manifest), *[a for u in given for a in ("--base-url", u)], "--out", str(out)]
    done = run_in_process([*args, "--no-cache"], env={**clean_env(), "OPENAI_API_KEY": "unused"})
    results = out / "results.json"
    tests = {t["name"]: t for t in json.loads(results.read_text())["tests"]} if results.exists() else {}
    return done.returncode, done.stdout + done.stderr, tests


def test_a_test_of_an_app_runs_on_that_app_s_preview(tmp_path: Path, site: DemoSite) -> None:
    docs = site.url.replace("127.0.0.1", "localhost")  # the same server under another host: another preview
    code, output, tests = run(tmp_path, site, "docs", f"docs={docs}")  # the flag over the manifest's apps:
    assert code == 0, output
    assert str(tests["Shop home"]["final_url"]).startswith(site.url + "/")
    assert str(tests["Docs help"]["final_url"]) == docs + "/help"


def test_a_test_whose_app_has_no_preview_url_stops_the_run_before_it_starts(tmp_path: Path, site: DemoSite) -> None:
    code, output, tests = run(tmp_path, site, "blog")
    assert code == 2 and not tests, output
    assert (
        f"{tmp_path / 'qa.yml'}:9: test 'Docs help' is for app 'blog', which has no preview URL: give --base-url blog=URL, "
        "or apps: {blog: URL} in the manifest." in output
    )


def test_a_monorepo_whose_every_test_is_for_an_app_needs_only_the_apps_previews(tmp_path: Path, site: DemoSite) -> None:
    """`--base-url web=URL --base-url docs=URL` alone, as the docs give it: refused before ("give the preview's URL
    once (got none)"), though no test would have used a plain one. The run names each app's preview."""
    docs = site.url.replace("127.0.0.1", "localhost")
    code, output, tests = run(tmp_path, site, "docs", f"shop={site.url}", f"docs={docs}", plain=False, shop="shop")
    assert code == 0, output
    assert str(tests["Shop home"]["final_url"]).startswith(site.url + "/")
    assert str(tests["Docs help"]["final_url"]) == docs + "/help"
    assert f"2 test(s) against docs: {docs}, shop: {site.url}" in " ".join(output.split()), output
    assert json.loads((tmp_path / "out" / "results.json").read_text())["base_url"] == f"docs: {docs}, shop: {site.url}"


def test_a_test_without_app_is_refused_at_its_line_when_only_apps_previews_are_given(tmp_path: Path, site: DemoSite) -> None:
    code, output, tests = run(tmp_path, site, "docs", f"docs={site.url}", plain=False)
    assert code == 2 and not tests, output
    assert (
        f"{tmp_path / 'qa.yml'}:5: test 'Shop home' has no app:, and --base-url gave only apps' previews: give the plain "
        "preview too (--base-url URL), or the test's app: NAME." in " ".join(output.split())
    )
