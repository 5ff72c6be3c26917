"""End to end, a run that only replays: it never imports browser-use (the run before it, which ran the agent, did, and
not Anthropic's SDK, on another provider), its browser is launched by Playwright with our flags, as the agent's is,
nothing reaches a host outside the fixture site's, and no process nor file of it is left in TMPDIR. (A browser that
does not start is started again: test_browser_start.)"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from preview_qa.agent.browsers.launch import (
    AGENT_ARGS,
    BROWSER_ARGS,
    DISABLED_FEATURES,
    PLAYWRIGHT_DISABLED_FEATURES,
    WINDOW,
)
from preview_qa.demo.scripted_llm import ScriptedLLM
from tests.conftest import CliRun, run_preview_qa
from tests.e2e.outside_hosts import OutsideHosts, host_of
from tests.e2e.processes import QUICK, left_behind, run_env
from tests.site import DemoSite

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
    """The features Chromium disables: from the one --disable-features (Chromium keeps a switch's last value, so a
    second would drop the first's)."""
    [features] = [a.split("=", 1)[1] for a in args if a.startswith("--disable-features=")]
    return set(features.split(","))


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
    assert "anthropic" not in imported(record.stderr)  # browser-use's Agent asks for its chat class, not for its SDK
    assert (replay.exit_code, replay.test("reads the price")["path"]) == (0, "replayed"), replay.stderr[-3000:]
    assert replay.test("reads the price")["status"] == "passed"
    assert "browser_use" not in imported(replay.stderr)
    assert "Traceback" not in replay.stderr

    [replay_launch] = launches(log)
    for launch in (agent_launch, replay_launch):  # the same launch: Playwright's pipe, and a port for browser-use
        assert "--remote-debugging-pipe" in launch and "--enable-automation" not in launch
        assert set(BROWSER_ARGS + AGENT_ARGS) <= set(launch)
        assert set(PLAYWRIGHT_DISABLED_FEATURES + DISABLED_FEATURES) <= disabled_features(launch)
        assert f"--window-size={WINDOW['width']},{WINDOW['height']}" in launch
        [profile] = [a.split("=", 1)[1] for a in launch if a.startswith("--user-data-dir=")]
        assert profile.startswith(str(browser_tmp) + "/")  # under the run's temp folder: found, killed and removed

    assert not {host_of(first) for first in hosts.seen}
    assert left_behind(browser_tmp) == []
    assert sorted(p.name for p in browser_tmp.iterdir()) == []
