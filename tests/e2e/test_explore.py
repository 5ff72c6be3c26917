"""`preview-qa explore` on the fixture pair (tests/site/explore_pair.py), a few pages each: the changed files' routes
first, a baseline that does not answer, a saved login. The whole pair's exploration is run once, by `run --explore`
(tests/e2e/test_run_explore.py), and what it finds is asserted there."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.conftest import clean_env, run_in_process
from tests.e2e.processes import closed_port
from tests.site.explore_pair import ACCOUNT, ACCOUNT_ERROR, PairUrls

pytestmark = pytest.mark.e2e


def test_the_changed_files_routes_are_explored_first(explore_pair: PairUrls, tmp_path: Path) -> None:
    manifest = tmp_path / "qa.yml"
    routes = {"src/help/**": ["/help"], "src/blog/**": ["/blog/[slug]"]}
    tests = [{"name": "home", "steps": [{"open": "/"}]}]
    manifest.write_text(yaml.safe_dump({"version": 1, "routes": routes, "tests": tests}), encoding="utf-8")
    (tmp_path / "changed.txt").write_text("src/help/page.tsx\nsrc/blog/post.tsx\n", encoding="utf-8")
    out = tmp_path / "out"
    args = ["explore", "--base-url", explore_pair.pr, "--baseline-url", explore_pair.main, "--out", str(out)]
    args += ["--manifest", str(manifest), "--changed-files", str(tmp_path / "changed.txt"), "--max-pages", "2"]
    args += ["--max-charters", "0"]
    proc = run_in_process(args, env=clean_env(GITHUB_STEP_SUMMARY=str(tmp_path / "summary.md")))
    result = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert proc.returncode == 1 and result["pages"][0] == "/help" and len(result["pages"]) == 2, result["pages"]
    assert ("console_error", "/help") in {(f["kind"], f["url"]) for f in result["findings"] if f["confirmed"]}
    assert any("/blog/[slug]" in note and "--page" in note for note in result["notes"]), result["notes"]
    # the job summary holds the findings once: the sweeps' and repros' own runs write none of theirs
    text = (out / "findings.md").read_text(encoding="utf-8")
    assert text.startswith("## This PR breaks") and (tmp_path / "summary.md").read_text(encoding="utf-8") == text


def test_a_baseline_that_does_not_answer_is_never_nothing_broken(explore_pair: PairUrls, tmp_path: Path) -> None:
    out = tmp_path / "out"
    down = f"http://127.0.0.1:{closed_port()}/"
    args = ["explore", "--base-url", explore_pair.pr, "--baseline-url", down, "--out", str(out), "--page", "/docs"]
    proc = run_in_process([*args, "--max-pages", "1"], env=clean_env())
    result = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert proc.returncode == 1, proc.stdout  # before: no finding compared, exit 0
    assert result["findings"] == [] and "/docs" in result["uncompared"], result
    assert "its sweep on the baseline errored: preview unreachable" in result["uncompared"]["/docs"]
    assert "could not be compared" in (out / "findings.md").read_text(encoding="utf-8")


def test_a_saved_login_explores_the_pages_behind_it(explore_pair: PairUrls, tmp_path: Path) -> None:
    """--use-state: the manifest's login test runs first on each side, and every page starts signed in; the repro
    signs in the same way. Signed out, /account leads to the login page, whose sweep sees nothing."""
    login = {
        "name": "log in",
        "secrets": {"pw": "SHOP_PASSWORD"},
        "save_state": "shopper",
        "steps": [
            {"open": "/login"},
            {"fill": {"label": "Email", "value": "demo@acme.test"}},
            {"fill": {"label": "Password", "value": "<secret>pw</secret>"}},
            {"click": {"role": "button", "name": "Log in"}},
        ],
        "expect": {"url": "/dashboard"},
    }
    manifest = tmp_path / "qa.yml"
    manifest.write_text(yaml.safe_dump({"version": 1, "tests": [login]}, sort_keys=False), encoding="utf-8")
    out = tmp_path / "out"
    args = ["explore", "--base-url", explore_pair.pr, "--baseline-url", explore_pair.main, "--out", str(out)]
    args += ["--manifest", str(manifest), "--use-state", "shopper", "--page", ACCOUNT, "--max-pages", "1"]
    proc = run_in_process(args, env=clean_env(SHOP_PASSWORD="demo-pass-123"))
    result = json.loads((out / "results.json").read_text(encoding="utf-8"))
    (found,) = [f for f in result["findings"] if f["url"] == ACCOUNT]
    assert proc.returncode == 1 and found["confirmed"] and found["summary"] == ACCOUNT_ERROR, result
    assert found["repro"]["use_state"] == "shopper" and "demo-pass-123" not in (out / "sweeps.yml").read_text()
    refused = run_in_process([*args[:-6], "--use-state", "nobody", "--page", ACCOUNT], env=clean_env())
    assert refused.returncode == 2 and "--use-state nobody: no test of the --manifest saves it" in refused.stderr
