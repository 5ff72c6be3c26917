"""End to end, a run that only replays: it never imports browser-use (the run before it, which ran the agent, did), its
browser is launched by Playwright with our flags (each one the agent's browser has too), nothing reaches a host outside
the fixture site's, and no process nor file of it is left in TMPDIR; a replays' browser that does not start is started
again, as an agent's is."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from preview_qa.agent.browser import BROWSER_ARGS, WINDOW
from preview_qa.demo.scripted_llm import ScriptedLLM
from preview_qa.demo.site import DemoSite
from tests.conftest import CliRun, run_preview_qa
from tests.e2e.outside_hosts import OutsideHosts, host_of
from tests.e2e.processes import QUICK, left_behind, run_env
from tests.fakes.chromium import launcher

pytestmark = pytest.mark.e2e

MANIFEST = """
version: 1
tests:
  - {name: reads the price, start: /product, task: "[quick] Read the price.", expect: {text: ["$19.99"]}}
"""


def run(folder: Path, site: DemoSite, llm: ScriptedLLM, env: dict[str, str], out: str) -> CliRun:
    """`preview-qa run` of MANIFEST with the replay cache in `folder`, into folder/out."""
    manifest = folder / "qa.yml"
    manifest.write_text(textwrap.dedent(MANIFEST), encoding="utf-8")
    args = ["run", str(manifest), "--base-url", site.url, "--out", str(folder / out), "--cache", str(folder / "cache")]
    args += ["--llm-base-url", llm.url, "--api-key", "k", "--model", "scripted"]
    proc = run_preview_qa(args, env={k: v for k, v in env.items() if k != "PREVIEW_QA_NO_CACHE"})
    return CliRun(proc.returncode, proc.stdout, proc.stderr, folder / out, llm)


def imported(stderr: str) -> set[str]:
    """The top-level packages a run imported, from its PYTHONPROFILEIMPORTTIME lines ("import time: ... | name")."""
    lines = [line for line in stderr.splitlines() if line.startswith("import time:")]
    assert lines, "the run printed no import times: the check would prove nothing"
    return {line.rsplit("|", 1)[-1].strip().split(".")[0] for line in lines}


def launches(folder: Path) -> list[list[str]]:
    """Each Chromium launch's arguments, as the wrapper logged them."""
    return [path.read_text(encoding="utf-8").splitlines() for path in sorted(folder.glob("launch-*"))]


def disabled_features(args: list[str]) -> set[str]:
    """The features Chromium disables: its last --disable-features (Chromium keeps a switch's last value)."""
    last = [a.split("=", 1)[1] for a in args if a.startswith("--disable-features=")][-1]
    return set(last.split(","))


def test_a_run_of_replays_never_imports_browser_use_and_its_browser_has_the_agents_flags(
    tmp_path: Path, browser_tmp: Path, site: DemoSite
) -> None:
    hosts = OutsideHosts()
    log = tmp_path / "launches"
    log.mkdir()
    wrapper = hosts.chromium(tmp_path, log)
    env = run_env(browser_tmp, PREVIEW_QA_CHROMIUM=str(wrapper), PYTHONPROFILEIMPORTTIME="1")
    with ScriptedLLM(QUICK) as llm:
        record = run(tmp_path, site, llm, env, "record")
        [agent_launch] = launches(log)
        for path in log.iterdir():
            path.unlink()
        replay = run(tmp_path, site, llm, env, "replay")
    hosts.sock.close()

    assert (record.exit_code, record.test("reads the price")["path"]) == (0, "agent"), record.stderr[-3000:]
    assert "browser_use" in imported(record.stderr)
    assert (replay.exit_code, replay.test("reads the price")["path"]) == (0, "replayed"), replay.stderr[-3000:]
    assert replay.test("reads the price")["status"] == "passed"
    assert "browser_use" not in imported(replay.stderr)
    assert "Traceback" not in replay.stderr

    [replay_launch] = launches(log)
    assert not [a for a in replay_launch if a.startswith("--remote-debugging-port")]  # Playwright's pipe, no port
    assert "--remote-debugging-pipe" in replay_launch
    ours = [a for a in BROWSER_ARGS if not a.startswith("--disable-features=")]
    assert set(ours) <= set(agent_launch) and set(ours) <= set(replay_launch)
    ours_disabled = disabled_features(BROWSER_ARGS)
    assert ours_disabled <= disabled_features(agent_launch) and ours_disabled <= disabled_features(replay_launch)
    assert f"--window-size={WINDOW['width']},{WINDOW['height']}" in replay_launch
    [profile] = [a.split("=", 1)[1] for a in replay_launch if a.startswith("--user-data-dir=")]
    assert profile.startswith(str(browser_tmp) + "/")  # under the run's temp folder: found, killed and removed

    assert not {host_of(first) for first in hosts.seen}
    assert left_behind(browser_tmp) == []
    assert sorted(p.name for p in browser_tmp.iterdir()) == []


def test_a_replays_browser_that_does_not_start_is_started_again_and_nothing_is_left(
    tmp_path: Path, browser_tmp: Path, site: DemoSite
) -> None:
    log = tmp_path / "launches.log"
    fake = run_env(
        browser_tmp,
        PREVIEW_QA_CHROMIUM=launcher(str(tmp_path)),
        FAKE_CHROMIUM_MODE="flaky",  # dies on its first launch, then is the real Chromium
        FAKE_CHROMIUM_LOG=str(log),
        FAKE_CHROMIUM_REAL="/usr/bin/chromium",
    )
    with ScriptedLLM(QUICK) as llm:
        record = run(tmp_path, site, llm, run_env(browser_tmp), "record")
        replay = run(tmp_path, site, llm, fake, "replay")

    assert (record.exit_code, record.test("reads the price")["path"]) == (0, "agent"), record.stderr[-3000:]
    test = replay.test("reads the price")
    assert (replay.exit_code, test["path"], test["status"]) == (0, "replayed", "passed"), replay.stderr[-3000:]
    assert len(log.read_text(encoding="utf-8").splitlines()) == 2
    events = [json.loads(line) for line in (replay.out / test["artifacts"]["events"]).read_text().splitlines()]
    failed = [(e["try"], e["reason"]) for e in events if e["type"] == "browser_start_failed"]
    [(attempt, reason)] = failed  # with what Playwright's launch saw
    assert attempt == 1 and reason.startswith("it exited before opening its debugging port: "), reason
    assert left_behind(browser_tmp) == []
    assert sorted(p.name for p in browser_tmp.iterdir()) == []
