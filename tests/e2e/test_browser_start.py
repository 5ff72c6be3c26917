"""End to end with a Chromium that fails to start (PREVIEW_QA_CHROMIUM = a fake): the start is tried twice, the test
errors with a reason that names the browser start, the run exits, and nothing of either try is left running."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from preview_qa.demo.scripted_llm import ScriptedLLM
from preview_qa.demo.site import DemoSite
from tests.e2e.processes import QUICK, left_behind, run_env, start_cli
from tests.fakes.chromium import launcher

pytestmark = pytest.mark.e2e

MANIFEST = """
version: 1
tests:
  - {name: reads the price, start: /product, task: "[quick] Read the price.", timeout: 200, expect: {text: ["$19.99"]}}
"""
REASONS = {
    "no-flags": r"no answer on its debugging port within \d+ s",
    "dies": r"it exited before opening its debugging port",
    "no-port": r"no answer on its debugging port within \d+ s",
    "handshake": r"RuntimeError: Failed to establish CDP connection to browser: timed out during opening handshake",
}


def run_with_fake(mode: str, tmp_path: Path, browser_tmp: Path, site: DemoSite) -> tuple[int, str, dict, int]:
    launches = browser_tmp / "launches.log"
    env = run_env(
        browser_tmp,
        PREVIEW_QA_CHROMIUM=launcher(str(tmp_path)),
        FAKE_CHROMIUM_MODE=mode,
        FAKE_CHROMIUM_LOG=str(launches),
        FAKE_CHROMIUM_REAL="/usr/bin/chromium",
    )
    with ScriptedLLM(QUICK) as llm:
        proc = start_cli(tmp_path, MANIFEST, site, llm.url, env=env)
        try:
            _, stderr = proc.communicate(timeout=400)
        finally:
            proc.kill()
    test = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))["tests"][0]
    return proc.returncode, stderr, test, len(launches.read_text().splitlines())


@pytest.mark.parametrize("mode", list(REASONS))
def test_a_browser_that_does_not_start_gets_a_second_try_then_errors_naming_it(
    mode: str, tmp_path: Path, browser_tmp: Path, site: DemoSite
) -> None:
    code, stderr, test, launches = run_with_fake(mode, tmp_path, browser_tmp, site)
    assert code == 1, stderr[-3000:]
    assert "Traceback" not in stderr
    assert launches == 2
    assert test["status"] == "errored", test
    assert re.fullmatch(rf"the browser did not start: {REASONS[mode]} \(2 tries\)", test["reason"]), test["reason"]
    assert "timed out after 200 s" not in test["reason"]
    seconds = [int(s) for s in re.findall(r"within (\d+) s", test["reason"])]
    assert test["duration_s"] >= sum(seconds), test  # the duration and the reason tell the same story
    assert test["usage"]["llm_calls"] == 0
    assert left_behind(browser_tmp) == []  # neither try's browser, nor the helper it started


def test_a_browser_that_fails_once_is_retried_and_the_test_runs(tmp_path: Path, browser_tmp: Path, site: DemoSite) -> None:
    code, stderr, test, launches = run_with_fake("flaky", tmp_path, browser_tmp, site)
    assert (code, test["status"], test["reason"]) == (0, "passed", "The price is $19.99."), stderr[-3000:]
    assert launches == 2
    events = [json.loads(line) for line in (tmp_path / "out" / test["artifacts"]["events"]).read_text().splitlines()]
    failed = [e for e in events if e["type"] == "browser_start_failed"]
    assert [(e["try"], e["reason"]) for e in failed] == [(1, "it exited before opening its debugging port")]
    assert left_behind(browser_tmp) == []
