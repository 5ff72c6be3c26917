"""End to end: SIGTERM or SIGINT mid-run (how CI cancels a job) stops promptly, keeps what finished, leaves no browser."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest
from junitparser import JUnitXml

from preview_qa.demo.scripted_llm import ScriptedLLM
from tests.conftest import clean_env
from tests.e2e.processes import (
    chromium_profiles,
    left_behind,
    no_orphans_left,
    run_env,
    running_with,
    start_cli,
    wait_for,
    wait_until_asked,
)
from tests.fakes.chromium import launcher
from tests.repo import JUNIT_SCHEMA
from tests.site import DemoSite

pytestmark = pytest.mark.e2e

MANIFEST = """
version: 1
defaults: {start: /product, timeout: 200}
tests:
  - {name: finishes first, task: "[quick] Read the price."}
  - {name: still running, task: "[slow] Keep waiting.", max_steps: 40}
  - {name: never started, task: "[quick] Read the price again."}
"""
SCENARIOS = [
    {"match": "[quick]", "turns": [{"done": {"status": "pass", "reason": "The price is $19.99."}}]},
    {"match": "[slow]", "turns": [{"actions": [{"wait": {"seconds": 2}}]}]},
]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_cancel_mid_run(sig: signal.Signals, tmp_path: Path, site: DemoSite) -> None:
    out = tmp_path / "out"
    profiles: set[str] = set()
    with ScriptedLLM(SCENARIOS) as llm:
        proc = start_cli(tmp_path, MANIFEST, site, llm, "--concurrency", "1", env=clean_env())
        wait_until_asked(proc, llm, "[slow]", 1, profiles)
        profiles.update(chromium_profiles(proc.pid))
        proc.send_signal(sig)
        try:
            stdout, stderr = proc.communicate(timeout=90)  # promptly: well before the running test's own timeout
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
    assert proc.returncode == 130, stderr[-3000:]
    assert "Traceback" not in stderr
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    statuses = {t["name"]: (t["status"], t["reason"]) for t in results["tests"]}
    assert statuses["finishes first"] == ("passed", "The price is $19.99.")
    assert statuses["still running"] == ("errored", "cancelled")
    assert statuses["never started"] == ("errored", "cancelled")
    assert (results["stop_reason"], results["notice"]) == ("cancelled", "cancelled")
    first = next(t for t in results["tests"] if t["name"] == "finishes first")
    assert first["artifacts"] and all(
        (out / p).is_file() for v in first["artifacts"].values() for p in ([v] if isinstance(v, str) else v)
    )
    JUNIT_SCHEMA.validate((out / "junit.xml").read_text(encoding="utf-8"))
    suite = next(iter(JUnitXml.fromfile(str(out / "junit.xml"))))
    assert (suite.tests, suite.errors) == (3, 2)
    assert "cancelled" in stdout
    no_orphans_left(profiles)


# When to cancel, and with which signals: (what to wait for, signals in order with the pause before each, and the
# fake Chromium to use, if any: see tests/fakes/chromium.py).
MOMENTS: dict[str, tuple[str, list[tuple[float, signal.Signals]], str | None]] = {
    "while the first browser starts": ("chromium", [(0.0, signal.SIGTERM)], None),
    "while a browser hangs at start": ("launched", [(2.0, signal.SIGTERM)], "no-port"),
    "as the first test finishes": ("[quick]", [(0.0, signal.SIGTERM)], None),
    "mid-step": ("[slow]", [(0.0, signal.SIGTERM)], None),
    "like GitHub: SIGINT, then SIGTERM": ("[slow]", [(0.0, signal.SIGINT), (1.0, signal.SIGTERM)], None),
    "twice at once during a browser start": ("chromium", [(0.0, signal.SIGTERM), (0.0, signal.SIGTERM)], None),
}
ENDS_WITHIN_S = 45  # generous for a loaded 2-core machine; what it takes is printed (about 3 s on an idle one)


@pytest.mark.parametrize("moment", list(MOMENTS))
def test_every_cancel_ends_with_130_its_results_and_no_browser(
    moment: str, tmp_path: Path, browser_tmp: Path, site: DemoSite
) -> None:
    wait_for_what, signals, fake = MOMENTS[moment]
    launches = browser_tmp / "launches.log"
    env = run_env(
        browser_tmp,
        **(
            {"PREVIEW_QA_CHROMIUM": launcher(str(tmp_path)), "FAKE_CHROMIUM_MODE": fake, "FAKE_CHROMIUM_LOG": str(launches)}
            if fake
            else {}
        ),
    )
    with ScriptedLLM(SCENARIOS) as llm:
        proc = start_cli(tmp_path, MANIFEST, site, llm, "--concurrency", "1", env=env)

        def reached() -> bool:
            assert proc.poll() is None, proc.communicate()
            if wait_for_what == "chromium":
                return any("chrom" in p for p in running_with(str(browser_tmp)))
            if wait_for_what == "launched":
                return launches.exists()
            return any(wait_for_what in json.dumps(body) for body in list(llm.requests))

        wait_for(reached, 180, f"the run to reach {moment!r}")
        clock = None
        for pause, sig in signals:
            time.sleep(pause)
            proc.send_signal(sig)
            clock = clock or time.monotonic()
        try:
            stdout, stderr = proc.communicate(timeout=ENDS_WITHIN_S + 60)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
    assert clock is not None
    ended_after = time.monotonic() - clock
    assert proc.returncode == 130, (moment, stderr[-3000:])
    print(f"{moment}: ended {ended_after:.1f} s after the first signal")
    assert ended_after < ENDS_WITHIN_S, (moment, ended_after)
    assert "Traceback" not in stderr
    assert "cancelled" in stdout
    results = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    assert (results["stop_reason"], results["notice"]) == ("cancelled", "cancelled")
    assert [t["name"] for t in results["tests"]] == ["finishes first", "still running", "never started"]
    assert results["tests"][-1]["status"] == "errored"
    assert left_behind(browser_tmp) == []
