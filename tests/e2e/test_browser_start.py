"""End to end with a Chromium that fails to start (PREVIEW_QA_CHROMIUM = a fake): the start is tried twice, the test
errors with a reason that names the browser start, the run exits, and nothing of either try is left running. One run
per mode, all at once."""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from preview_qa.demo.scripted_llm import ScriptedLLM
from tests.e2e.processes import QUICK, left_behind, run_env, short_tmp, start_cli
from tests.fakes.chromium import launcher
from tests.site import DemoSite

pytestmark = pytest.mark.e2e

MANIFEST = """
version: 1
tests:
  - {name: reads the price, start: /product, task: "[quick] Read the price.", timeout: 200, expect: {text: ["$19.99"]}}
"""
REASONS = {
    # --browser-start-timeout 5 (its least): Playwright's own launch gives up a second before it, and the reason says
    # what it waited
    "no-flags": r"no answer on its debugging port within (4|5) s",
    "dies": r"it exited before opening its debugging port: .+",  # with what Playwright's launch saw
    "no-port": r"no answer on its debugging port within (4|5) s",
}
NEVER_ANSWER = {"no-flags", "no-port"}  # these wait out the start timeout: 5 s a try, not the default 30


@dataclass
class Start:
    code: int
    stderr: str
    test: dict[str, Any]  # the one test's entry in results.json
    launches: int  # how many times the fake Chromium was launched
    out: Path
    browser_tmp: Path  # the run's TMPDIR, where every process it started is found by


@pytest.fixture(scope="module")
def starts(tmp_path_factory: pytest.TempPathFactory, site: DemoSite) -> Iterator[dict[str, Start]]:
    """One run per fake Chromium mode, all at once: the modes that never answer spend their start timeouts (twice
    5 s each, by --browser-start-timeout) waiting, not computing, so they wait side by side instead of one after
    another. The others keep the default, so that a real Chromium's start is never cut short on a busy machine."""
    with contextlib.ExitStack() as stack, ScriptedLLM(QUICK) as llm:
        procs = {}
        for mode in [*REASONS, "flaky"]:
            folder, tmp = tmp_path_factory.mktemp(mode), stack.enter_context(short_tmp())
            env = run_env(
                tmp,
                PREVIEW_QA_CHROMIUM=launcher(str(folder)),
                FAKE_CHROMIUM_MODE=mode,
                FAKE_CHROMIUM_LOG=str(tmp / "launches.log"),
                FAKE_CHROMIUM_REAL="/usr/bin/chromium",
            )
            timeout = ["--browser-start-timeout", "5"] if mode in NEVER_ANSWER else []
            procs[mode] = folder, tmp, start_cli(folder, MANIFEST, site, llm, *timeout, env=env)
        done = {}
        for mode, (folder, tmp, proc) in procs.items():
            try:
                _, stderr = proc.communicate(timeout=400)
            finally:
                proc.kill()
            [test] = json.loads((folder / "out" / "results.json").read_text(encoding="utf-8"))["tests"]
            launches = len((tmp / "launches.log").read_text().splitlines())
            done[mode] = Start(proc.returncode, stderr, test, launches, folder / "out", tmp)
        yield done


@pytest.mark.parametrize("mode", list(REASONS))
def test_a_browser_that_does_not_start_gets_a_second_try_then_errors_naming_it(starts: dict[str, Start], mode: str) -> None:
    run = starts[mode]
    code, stderr, test, launches = run.code, run.stderr, run.test, run.launches
    assert code == 1, stderr[-3000:]
    assert "Traceback" not in stderr
    assert launches == 2
    assert test["status"] == "errored", test
    # each try's reason, once if both tries gave the same: on a busy machine one try can end on our bound (5 s) and the
    # other on Playwright's own, a second before it (4 s)
    each = f"(?:{REASONS[mode]})"
    assert re.fullmatch(rf"the browser did not start: {each}(?:; {each})? \(2 tries\)", test["reason"]), test["reason"]
    assert "timed out after 200 s" not in test["reason"]
    seconds = [int(s) for s in re.findall(r"within (\d+) s", test["reason"])]
    assert test["duration_s"] >= sum(seconds), test  # the duration and the reason tell the same story
    assert test["usage"]["llm_calls"] == 0
    assert left_behind(run.browser_tmp) == []  # neither try's browser, nor the helper it started


def test_a_browser_that_fails_once_is_retried_and_the_test_runs(starts: dict[str, Start]) -> None:
    run = starts["flaky"]
    code, stderr, test, launches = run.code, run.stderr, run.test, run.launches
    assert (code, test["status"], test["reason"]) == (0, "passed", "The price is $19.99."), stderr[-3000:]
    assert launches == 2
    events = [json.loads(line) for line in (run.out / test["artifacts"]["events"]).read_text().splitlines()]
    failed = [e for e in events if e["type"] == "browser_start_failed"]
    [(attempt, reason)] = [(e["try"], e["reason"]) for e in failed]
    assert attempt == 1 and reason.startswith("it exited before opening its debugging port: "), reason
    assert left_behind(run.browser_tmp) == []
