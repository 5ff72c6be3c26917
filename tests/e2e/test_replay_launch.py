"""End to end, a run that only replays: it never imports browser-use (the run before it, which ran the agent, did), its
browser is launched by Playwright with our flags (each one the agent's browser has too), nothing reaches a host outside
the fixture site's, and no process nor file of it is left in TMPDIR."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from preview_qa.agent.browser import BROWSER_ARGS, WINDOW
from preview_qa.demo.scripted_llm import ScriptedLLM
from preview_qa.demo.site import DemoSite
from tests.conftest import CliRun, run_preview_qa
from tests.e2e.outside_hosts import OutsideHosts, host_of
from tests.e2e.processes import QUICK, left_behind, run_env

pytestmark = pytest.mark.e2e

MANIFEST = """
version: 1
tests:
  - {name: reads the price, start: /product, task: "[quick] Read the price.", expect: {text: ["$19.99"]}}
"""


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
    manifest = tmp_path / "qa.yml"
    manifest.write_text(textwrap.dedent(MANIFEST), encoding="utf-8")
    env = run_env(browser_tmp, PREVIEW_QA_CHROMIUM=str(wrapper), PYTHONPROFILEIMPORTTIME="1")
    env.pop("PREVIEW_QA_NO_CACHE", None)
    with ScriptedLLM(QUICK) as llm:

        def run(out: str) -> CliRun:
            args = ["run", str(manifest), "--base-url", site.url, "--out", str(tmp_path / out)]
            args += ["--cache", str(tmp_path / "cache"), "--llm-base-url", llm.url, "--api-key", "k", "--model", "scripted"]
            proc = run_preview_qa(args, env=env)
            return CliRun(proc.returncode, proc.stdout, proc.stderr, tmp_path / out, llm)

        record = run("record")
        [agent_launch] = launches(log)
        for path in log.iterdir():
            path.unlink()
        replay = run("replay")
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
