"""Browsers are reused between tests, their state never is: a test that fills a cart (a cookie, localStorage, a second
tab) leaves nothing for the tests after it or beside it, at concurrency 1 and 2, while the run starts no more browsers
than tests run at once."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from preview_qa.demo.scripted_llm import ScriptedLLM
from preview_qa.demo.site import DemoSite
from tests.conftest import clean_env, run_args
from tests.e2e.processes import chromium_profiles, no_orphans_left

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


def run(tmp_path: Path, site: DemoSite, order: str, concurrency: int) -> tuple[dict[str, dict[str, Any]], set[str], int]:
    """Run the tests in `order`; return their results, every Chromium profile seen, and the most seen at once."""
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
    results = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))["tests"]
    assert proc.returncode == 0, ([(t["name"], t["status"], t["reason"]) for t in results], stderr[-2000:])
    no_orphans_left(profiles)
    return {t["name"]: t for t in results}, profiles, most


def test_consecutive_tests_in_one_browser_share_nothing(tmp_path: Path, site: DemoSite) -> None:
    results, profiles, _ = run(tmp_path, site, "fill empty fill empty", 1)
    assert {n: t["status"] for n, t in results.items()} == dict.fromkeys(results, "passed"), results
    assert len(profiles) == 1  # one browser served all four tests: the isolation was the contexts'


def test_concurrent_tests_share_nothing_and_start_no_more_browsers_than_run_at_once(tmp_path: Path, site: DemoSite) -> None:
    results, profiles, most = run(tmp_path, site, "fill fill empty empty fill empty", 2)
    assert {n: t["status"] for n, t in results.items()} == dict.fromkeys(results, "passed"), results
    assert most <= 2 and len(profiles) <= 2, profiles
