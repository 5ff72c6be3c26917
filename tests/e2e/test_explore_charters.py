"""`preview-qa explore`'s agent charters on the fixture pair (tests/site/explore_pair.py), with a scripted agent over
real HTTP: on each changed page an agent uses the page and reports what it finds broken; the two bugs only a user
finds (AGENT_ONLY) come out new and confirmed by their repros, and the agent's false claims (a fault on neither side,
one main has too) come out unconfirmed, each with why; the confirmed repros, run by `preview-qa run` as they stand,
fail on the PR and pass on main."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from preview_qa.demo.scripted_llm import ScriptedLLM
from tests.conftest import clean_env, run_in_process
from tests.site.explore_pair import ADD_TO_CART, AGENT_ONLY, BLUE, CART, CHARTER_ROUTES, CHARTERS, MUG, REVIEWS, PairUrls

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def llm() -> Iterator[ScriptedLLM]:
    server = ScriptedLLM(CHARTERS)
    server.start()
    yield server
    server.stop()


def llm_flags(server: ScriptedLLM) -> list[str]:
    return ["--llm-base-url", server.url, "--api-key", "k", "--model", "scripted"]


@pytest.fixture(scope="module")
def explored(
    tmp_path_factory: pytest.TempPathFactory, explore_pair: PairUrls, llm: ScriptedLLM
) -> tuple[int, dict[str, Any], Path]:
    folder = tmp_path_factory.mktemp("charters")
    manifest, changed, out = folder / "qa.yml", folder / "changed.txt", folder / "out"
    tests = [{"name": "home", "steps": [{"open": "/"}]}]
    manifest.write_text(yaml.safe_dump({"version": 1, "routes": CHARTER_ROUTES, "tests": tests}), encoding="utf-8")
    changed.write_text("src/search/page.tsx\nsrc/product/page.tsx\n", encoding="utf-8")
    args = ["explore", "--base-url", explore_pair.pr, "--baseline-url", explore_pair.main, "--out", str(out)]
    args += ["--manifest", str(manifest), "--changed-files", str(changed), "--max-pages", "2", *llm_flags(llm)]
    proc = run_in_process(args, env=clean_env())
    assert (out / "results.json").is_file(), proc.stdout + proc.stderr
    return proc.returncode, json.loads((out / "results.json").read_text(encoding="utf-8")), out


def by_summary(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f["summary"]: f for f in result["findings"] if f["kind"] == "agent"}


def test_the_bugs_only_a_user_finds_are_new_and_confirmed(explored: tuple[int, dict[str, Any], Path]) -> None:
    code, result, out = explored
    assert code == 1 and result["pages"] == ["/search", "/products/1"], result["pages"]
    agents = by_summary(result)
    assert {agents[s]["url"] for s in (MUG, CART)} == set(AGENT_ONLY)
    for summary in (MUG, CART):
        assert agents[summary]["confirmed"] and not agents[summary]["on_baseline"], agents[summary]["reason"]
    # the repro: the reported steps from the page, then the check a working page passes
    assert agents[CART]["repro"]["steps"] == [{"open": "/products/1"}, {"do": f"Click {ADD_TO_CART} once"}]
    assert agents[CART]["repro"]["expect"] == {"text": ["Cart: 1"]}
    assert set(result["charters"]) == {"/search", "/products/1"} and result["usage"]["llm_calls"] > 0
    assert (out / agents[CART]["evidence"]["screenshot"]).is_file(), agents[CART]["evidence"]  # the charter's page
    assert [f for f in result["findings"] if f["kind"] != "agent"] == []  # the sweeps see nothing on these pages


def test_the_agent_s_false_claims_are_unconfirmed_with_why(explored: tuple[int, dict[str, Any], Path]) -> None:
    _, result, out = explored
    agents = by_summary(result)
    assert not agents[BLUE]["confirmed"] and "did not fail on the preview" in agents[BLUE]["reason"]
    assert not agents[REVIEWS]["confirmed"] and "did not pass on the baseline" in agents[REVIEWS]["reason"]
    assert not agents[REVIEWS]["on_baseline"]  # a claim its repro fails on both sides is no proof main has the bug
    text = (out / "findings.md").read_text(encoding="utf-8")
    assert text.startswith("## This PR breaks 2 things") and BLUE in text.split("Unconfirmed")[1]


def test_each_confirmed_agent_repro_fails_on_the_pr_and_passes_on_main(
    explored: tuple[int, dict[str, Any], Path], explore_pair: PairUrls, llm: ScriptedLLM, tmp_path: Path
) -> None:
    _, result, _ = explored
    repros = [f["repro"] for f in result["findings"] if f["confirmed"]]
    manifest = tmp_path / "qa.yml"
    manifest.write_text(yaml.safe_dump({"version": 1, "tests": repros}, sort_keys=False), encoding="utf-8")
    for url, status in ((explore_pair.pr, "failed"), (explore_pair.main, "passed")):
        out = tmp_path / status
        args = ["run", str(manifest), "--base-url", url, "--out", str(out), *llm_flags(llm)]
        proc = run_in_process(args, env=clean_env())
        tests = json.loads((out / "results.json").read_text(encoding="utf-8"))["tests"]
        assert {t["name"]: t["status"] for t in tests} == {r["name"]: status for r in repros}, proc.stdout
