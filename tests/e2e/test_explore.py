"""`preview-qa explore` on the fixture pair (tests/site/explore_pair.py): every regression the PR plants that a sweep
sees is found, new and confirmed by its repro; main's own bugs are `on_baseline`; the pages alike on both sides give
nothing; and each confirmed repro, run by `preview-qa run` as it stands, fails on the PR and passes on main."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import clean_env, run_in_process
from tests.e2e.processes import closed_port
from tests.site.explore_pair import ACCOUNT, ACCOUNT_ERROR, ALSO_ON_PR, CLEAN, ON_BOTH, PR_ONLY, PairUrls

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def explored(tmp_path_factory: pytest.TempPathFactory, explore_pair: PairUrls) -> tuple[int, dict[str, Any], Path]:
    out = tmp_path_factory.mktemp("explore") / "out"
    args = ["explore", "--base-url", explore_pair.pr, "--baseline-url", explore_pair.main, "--out", str(out)]
    proc = run_in_process(args, env=clean_env(GITHUB_STEP_SUMMARY=str(out.parent / "summary.md")))
    return proc.returncode, json.loads((out / "results.json").read_text(encoding="utf-8")), out


def test_every_planted_regression_is_found_new_and_confirmed(explored: tuple[int, dict[str, Any], Path]) -> None:
    code, result, _ = explored
    assert code == 1  # the PR breaks something
    breaks = {(f["kind"], f["url"]) for f in result["findings"] if f["confirmed"] and not f["on_baseline"]}
    planted = {(kind, page) for kind, page in PR_ONLY.items()}
    consequences = {(kind, page) for page, kinds in ALSO_ON_PR.items() for kind in kinds}
    assert planted <= breaks, planted - breaks
    assert breaks <= planted | consequences, breaks - planted - consequences  # no false alarm


def test_main_s_own_bugs_are_on_baseline_and_alike_pages_give_nothing(explored: tuple[int, dict[str, Any], Path]) -> None:
    _, result, _ = explored
    on_main = {(f["kind"], f["url"]) for f in result["findings"] if f["on_baseline"]}
    assert set(ON_BOTH) <= on_main, set(ON_BOTH) - on_main  # /team's error differs by its request id: folded, still one
    assert not any(f["on_baseline"] and f["confirmed"] for f in result["findings"])
    assert not [f for f in result["findings"] if f["url"] in CLEAN]
    assert set(result["pages"]) >= {*PR_ONLY.values(), *CLEAN}  # from the sitemap


def test_the_findings_page_says_what_the_pr_breaks(explored: tuple[int, dict[str, Any], Path]) -> None:
    _, result, out = explored
    text = (out / "findings.md").read_text(encoding="utf-8")
    breaks = [f for f in result["findings"] if f["confirmed"] and not f["on_baseline"]]
    assert text.startswith(f"## This PR breaks {len(breaks)} things")
    for f in breaks:  # the page as the sweep or repro saw it, by its path from the exploration's folder
        assert (out / f["evidence"]["screenshot"]).is_file(), f["evidence"]
    assert not list(out.glob("*/tests/*/trace.zip"))  # --trace (here the action's `trace: off`) holds for its runs too
    assert "<summary>Also on main (" in text and "```yaml" in text
    # the job summary holds the findings once: the sweeps' and repros' own runs write none of theirs
    assert (out.parent / "summary.md").read_text(encoding="utf-8") == text
    # each run's results name the manifest it ran, and it is there beside them
    assert result["runs"] == ["sweep-preview", "sweep-baseline", "repro-preview", "repro-baseline"]
    for run in result["runs"]:
        named = Path(json.loads((out / run / "results.json").read_text(encoding="utf-8"))["manifest"])
        assert named.parent == out and named.is_file(), named


def test_each_confirmed_repro_run_as_it_stands_fails_on_the_pr_and_passes_on_main(
    explored: tuple[int, dict[str, Any], Path], explore_pair: PairUrls, tmp_path: Path
) -> None:
    _, result, _ = explored
    repros = [f["repro"] for f in result["findings"] if f["confirmed"] and not f["on_baseline"] and f["kind"] != "visual"]
    manifest = tmp_path / "qa.yml"
    manifest.write_text(yaml.safe_dump({"version": 1, "tests": repros}, sort_keys=False), encoding="utf-8")
    for url, status in ((explore_pair.pr, "failed"), (explore_pair.main, "passed")):
        out = tmp_path / status
        proc = run_in_process(["run", str(manifest), "--base-url", url, "--out", str(out)], env=clean_env())
        tests = json.loads((out / "results.json").read_text(encoding="utf-8"))["tests"]
        assert {t["name"]: t["status"] for t in tests} == {r["name"]: status for r in repros}, proc.stdout


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
    proc = run_in_process(args, env=clean_env())
    result = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert proc.returncode == 1 and result["pages"][0] == "/help" and len(result["pages"]) == 2, result["pages"]
    assert ("console_error", "/help") in {(f["kind"], f["url"]) for f in result["findings"] if f["confirmed"]}
    assert any("/blog/[slug]" in note and "--page" in note for note in result["notes"]), result["notes"]


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
