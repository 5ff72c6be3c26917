"""End to end: Chromium killed mid-test errors that test, the next test gets a fresh browser, and no Chromium is left."""

from __future__ import annotations

import json
from pathlib import Path

import psutil
import pytest

from preview_qa.demo.scripted_llm import ScriptedLLM
from tests.conftest import clean_env
from tests.e2e.processes import chromium_profiles, no_orphans_left, start_cli, wait_until_asked
from tests.site import DemoSite

pytestmark = pytest.mark.e2e

MANIFEST = """
version: 1
defaults: {start: /product, timeout: 150}
tests:
  - {name: browser killed, task: "[victim] Keep waiting.", max_steps: 30}
  - {name: runs after the crash, task: "[after] Read the price.", expect: {text: ["$19.99"]}}
"""
SCENARIOS = [
    {"match": "[victim]", "turns": [{"actions": [{"wait": {"seconds": 1}}]}]},
    {"match": "[after]", "turns": [{"done": {"status": "pass", "reason": "The price is $19.99."}}]},
]


def test_chromium_killed_mid_test(tmp_path: Path, site: DemoSite) -> None:
    out = tmp_path / "out"
    profiles: set[str] = set()
    with ScriptedLLM(SCENARIOS) as llm:
        proc = start_cli(tmp_path, MANIFEST, site, llm, "--concurrency", "1", env=clean_env())
        wait_until_asked(proc, llm, "[victim]", 2, profiles)
        victim_profiles = chromium_profiles(proc.pid)
        assert len(victim_profiles) == 1
        browsers = [
            p
            for p in psutil.Process(proc.pid).children(recursive=True)
            if p.parent() is not None and "chrom" not in p.parent().name().lower() and "chrom" in p.name().lower()
        ]
        assert browsers, "no Chromium browser process found under the CLI"
        for browser in browsers:
            browser.kill()
        _, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 1, stderr[-3000:]
    results = {t["name"]: t for t in json.loads((out / "results.json").read_text(encoding="utf-8"))["tests"]}
    killed = results["browser killed"]
    assert killed["status"] == "errored", killed
    assert "browser" in killed["reason"] and ("crashed" in killed["reason"] or "closed" in killed["reason"]), killed
    assert results["runs after the crash"]["status"] == "passed", results["runs after the crash"]
    assert "Traceback" not in stderr
    no_orphans_left(profiles)
