"""`preview-qa demo --explore` (#68, 7): the demo shop and its PR copy, explored with no API key. It exits 0 when
explore finds exactly what the PR breaks (the demo's own rule: the breakage is the point of the demo), and 1 when it
misses one or raises anything else new."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from preview_qa.demo.exploring import off_script, told
from preview_qa.results import ExploreResult, Finding, FindingKind
from tests.conftest import clean_env, run_in_process

pytestmark = pytest.mark.e2e


def test_demo_explore_finds_the_two_things_its_pr_breaks_and_nothing_else_new(tmp_path: Path) -> None:
    demo = run_in_process(["demo", "--explore", "--out", str(tmp_path)], env=clean_env())
    assert demo.returncode == 0, demo.stdout + demo.stderr
    result = json.loads((tmp_path / "explore" / "results.json").read_text(encoding="utf-8"))
    new = {(f["kind"], f["url"]) for f in result["findings"] if not f["on_baseline"]}
    assert new == {("http_error", "/product"), ("console_error", "/signup")}
    assert all(f["confirmed"] for f in result["findings"] if not f["on_baseline"])
    on_main = {(f["kind"], f["url"]) for f in result["findings"] if f["on_baseline"]}
    assert ("console_error", "/broken") in on_main  # the checkout's own bugs: main has them too
    assert "breaks: http_error on /product: GET /api/stock answered 500" in demo.stdout
    assert "demo: explore found both things the PR breaks" in demo.stdout
    assert (tmp_path / "explore" / "findings.md").read_text(encoding="utf-8").startswith("## This PR breaks 2 things")


def test_demo_explore_is_off_script_when_it_misses_a_plant_or_raises_another() -> None:
    def found(kind: FindingKind, url: str) -> Finding:
        return Finding(kind=kind, url=url, summary="s", on_baseline=False, confirmed=True, reason="r", repro={})

    planted = [found(FindingKind.HTTP_ERROR, "/product"), found(FindingKind.CONSOLE_ERROR, "/signup")]
    result = ExploreResult(base_url="http://pr", baseline_url="http://main", started_at="now", findings=planted)
    assert not off_script(result)
    missed = result.model_copy(update={"findings": [planted[0], found(FindingKind.VISUAL, "/")]})
    assert off_script(missed)
    lines = told(missed, Path("out"))
    assert "demo: explore missed what the PR breaks: the console error 'Signup: the password rules failed to load'" in lines
    assert "demo: explore raised what the demo does not plant: visual on /" in lines


def test_demo_explore_runs_no_tests_so_it_takes_no_plan(tmp_path: Path) -> None:
    both = run_in_process(["demo", "--explore", "--plan", "--out", str(tmp_path)], env=clean_env())
    assert both.returncode == 2
    assert "give --plan or --explore, not both" in both.stderr and not (tmp_path / "explore").exists()
