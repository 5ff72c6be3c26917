"""Browsers are reused and shared between agent tests, their state never is: a test that fills a cart (a cookie,
localStorage, a second tab) leaves nothing for the tests after it or beside it in the same browser, at concurrency 1
and 2, and no test's agent is ever shown another test's tab; the run starts no more browsers than tests run at once."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from preview_qa.demo.scripted_llm import ScriptedLLM
from tests.conftest import clean_env, run_args
from tests.e2e.processes import chromium_profiles, no_orphans_left
from tests.site import DemoSite

pytestmark = pytest.mark.e2e


def fill(site: DemoSite) -> list[dict[str, Any]]:
    return [
        {"actions": [{"click": {"element": "Add to cart"}}]},
        {"actions": [{"click": {"element": "Save for later"}}]},
        # a tab browser-use opens itself: it must share the test's cookies (and nobody else's)
        {"actions": [{"navigate": {"url": f"{site.url}/basket", "new_tab": True}}]},
        {"actions": [{"click": {"element": "Add to cart"}}]},
        {"done": {"status": "pass", "reason": "The cart holds two items."}},
    ]


def scenarios(site: DemoSite) -> list[dict[str, Any]]:
    return [
        {"match": "[fill]", "turns": fill(site)},
        {"match": "[empty]", "turns": [{"done": {"status": "pass", "reason": "The cart is empty."}}]},
    ]


def manifest(order: str) -> str:
    tests = []
    for n, kind in enumerate(order.split(), 1):
        if kind == "fill":
            tests.append(
                f'  - {{name: "fill {n}", task: "[fill] Add to the cart ({n}).", '
                'expect: {text: ["Cart: 2 item(s)", "Saved for later: 1"]}}'
            )
        else:
            tests.append(
                f'  - {{name: "empty {n}", task: "[empty] Check the cart is empty ({n}).", '
                'expect: {text: ["Cart: 0 item(s)", "Saved for later: 0"]}}'
            )
    return "version: 1\ndefaults: {start: /basket, max_steps: 8, timeout: 240}\ntests:\n" + "\n".join(tests) + "\n"


Run = tuple[dict[str, dict[str, Any]], set[str], int, dict[str, set[str]]]


def tabs_shown(requests: list[Any]) -> dict[str, set[str]]:
    """The tabs browser-use showed each test's agent (by the test's number in its task), from the LLM's requests."""
    shown: dict[str, set[str]] = {}
    for body in requests:
        text = json.dumps(body)
        test = re.search(r"\(([0-9]+)\)\.", text)
        assert test is not None, text[:300]
        shown.setdefault(test.group(1), set()).update(re.findall(r"Tab ([0-9A-F]{4}):", text))
    return shown


def run(tmp_path: Path, site: DemoSite, order: str, concurrency: int) -> Run:
    """Run the tests in `order`; return their results, every Chromium profile seen, the most seen at once, and the
    tabs each test's agent was shown."""
    profiles: set[str] = set()
    most = 0
    with ScriptedLLM(scenarios(site)) as llm:
        (tmp_path / "qa.yml").write_text(manifest(order), encoding="utf-8")
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "preview_qa",
                *run_args(tmp_path / "qa.yml", site.url, tmp_path / "out", llm, "--concurrency", str(concurrency)),
            ],
            env=clean_env(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        while proc.poll() is None:
            now = chromium_profiles(proc.pid)
            profiles |= now
            most = max(most, len(now))
            time.sleep(0.2)
        _, stderr = proc.communicate()
        shown = tabs_shown(list(llm.requests))
    results = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))["tests"]
    assert proc.returncode == 0, ([(t["name"], t["status"], t["reason"]) for t in results], stderr[-2000:])
    no_orphans_left(profiles)
    events = [json.loads(line) for f in (tmp_path / "out").glob("tests/*/events.jsonl") for line in f.read_text().splitlines()]
    assert events and [e for e in events if e["type"] == "out_of_context"] == []  # browser-use never reached beyond
    return {t["name"]: t for t in results}, profiles, most, shown


def only_their_own_tabs(shown: dict[str, set[str]], order: str) -> None:
    """Each test's agent saw its own tabs only: a test that opens none saw one, and no tab was shown to two tests."""
    kinds = dict(zip((str(n) for n in range(1, len(order.split()) + 1)), order.split(), strict=True))
    assert sorted(shown) == sorted(kinds), shown
    for n, tabs in shown.items():
        assert len(tabs) == (1 if kinds[n] == "empty" else 2), (n, shown)
    assert sum(len(tabs) for tabs in shown.values()) == len(set().union(*shown.values())), shown


def test_consecutive_tests_in_one_browser_share_nothing(tmp_path: Path, site: DemoSite) -> None:
    results, profiles, _, shown = run(tmp_path, site, "fill empty fill empty", 1)
    assert {n: t["status"] for n, t in results.items()} == dict.fromkeys(results, "passed"), results
    assert len(profiles) == 1  # one browser served all four tests: the isolation was the contexts'
    only_their_own_tabs(shown, "fill empty fill empty")


def test_concurrent_tests_in_one_browser_share_nothing(tmp_path: Path, site: DemoSite) -> None:
    order = "fill fill empty empty fill empty"
    results, profiles, most, shown = run(tmp_path, site, order, 2)
    assert {n: t["status"] for n, t in results.items()} == dict.fromkeys(results, "passed"), results
    # two tests at a time joined one browser (a second starts only if a test arrives while the first is being checked)
    assert most <= 2 and len(profiles) < len(results), profiles
    only_their_own_tabs(shown, order)
