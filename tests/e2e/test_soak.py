"""End to end, many browsers: a run of short tests and a run that starts many browsers at once on 2 cores both end
with the process exited, every test passed, and no process of any browser nor any file left in TMPDIR
(bench/soak.py is the long version)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from preview_qa.demo.scripted_llm import ScriptedLLM
from preview_qa.demo.site import DemoSite
from tests.e2e.processes import QUICK, left_behind, run_env, short_tests, start_cli

pytestmark = pytest.mark.e2e


def run_short_tests(count: int, concurrency: int, tmp_path: Path, browser_tmp: Path, site: DemoSite) -> dict:
    with ScriptedLLM(QUICK) as llm:
        proc = start_cli(tmp_path, short_tests(count), site, llm.url, "--concurrency", str(concurrency),
                         env=run_env(browser_tmp))
        try:
            _, stderr = proc.communicate(timeout=900)  # the process ends by itself: no hang after the last result
        finally:
            proc.kill()
    assert proc.returncode == 0, stderr[-3000:]
    assert "Traceback" not in stderr
    results = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    assert [t["status"] for t in results["tests"]] == ["passed"] * count, [t["reason"] for t in results["tests"]]
    assert left_behind(browser_tmp) == []
    assert sorted(p.name for p in browser_tmp.iterdir()) == []  # no profile, download folder or other file left either
    return results


def test_soak_twenty_short_tests_four_at_a_time(tmp_path: Path, browser_tmp: Path, site: DemoSite) -> None:
    run_short_tests(20, 4, tmp_path, browser_tmp, site)


def test_stress_eight_browsers_start_at_once_on_two_cores(tmp_path: Path, browser_tmp: Path, site: DemoSite) -> None:
    results = run_short_tests(8, 8, tmp_path, browser_tmp, site)
    retried = [t["name"] for t in results["tests"]
               if "browser_start_failed" in (tmp_path / "out" / t["artifacts"]["events"]).read_text(encoding="utf-8")]
    print(f"{len(retried)} of 8 browsers needed a second start: {retried}")
