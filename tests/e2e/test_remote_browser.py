"""End to end: `run --cdp-url` runs every test in a Chromium started apart (as on a grid), each in a context of its own:
six agent tests at concurrency 3 pass, every page request the site sees comes from that browser (its own user agent),
each keeps its trace and screenshots, the dialog flows of the moving pages are answered as in a local browser (in the
same run), none of the run's pages is left open in it, and it is still running afterwards.
A remote browser killed mid-run, or one that stops answering (SIGSTOP: its connection stays open), errors its test
saying so, and the run ends."""

from __future__ import annotations

import os
import signal
import textwrap
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import CliRun, clean_env, preview_qa_run
from tests.e2e.dialog_flows import DIALOG_FLOWS, answered_as_asked, dialog_scenarios, dialog_tests
from tests.e2e.remote_chromium import USER_AGENT, RemoteChromium, remote_chromium
from tests.site import DemoSite
from tests.site.signals import SignallingLLM

pytestmark = pytest.mark.e2e

SIX = (
    "version: 1\ntests:\n"
    + "".join(
        f"""  - name: remote {i}
    start: /product
    task: "[remote] Read the price ({i})."
    expect: {{text: ["$19.99"]}}
"""
        for i in range(6)
    )
    + dialog_tests(1)
)
DONE = {"done": {"status": "pass", "reason": "$19.99."}}
SCENARIOS = [
    {"match": "[remote]", "turns": [{"actions": [{"scroll": {"down": True}}]}, DONE]},
    {"match": "[killed]", "name": "killed", "turns": [DONE]},
    *dialog_scenarios(),
]
Six = tuple[CliRun, list[dict[str, str]], RemoteChromium]  # the run, the headers of each request it made, the browser
KILLED = """\
version: 1
tests:
  - name: its browser is killed
    start: /product
    task: "[killed] Read the price."
    expect: {text: ["$19.99"]}
"""


def _run(folder: Path, manifest: str, site: DemoSite, llm: SignallingLLM, browser: RemoteChromium, *more: str) -> CliRun:
    (folder / "qa.yml").write_text(textwrap.dedent(manifest), encoding="utf-8")
    extra = ("--concurrency", "3", "--cdp-url", browser.url, *more)
    return preview_qa_run(folder / "qa.yml", site.url, folder / "out", llm, *extra, env=clean_env(), process=True)


@pytest.fixture(scope="module")
def six(tmp_path_factory: pytest.TempPathFactory, site: DemoSite) -> Iterator[Six]:
    with remote_chromium() as browser, SignallingLLM(SCENARIOS, on_done=lambda name: None) as llm:
        before = len(site.header_log)
        run = _run(tmp_path_factory.mktemp("remote"), SIX, site, llm, browser, "--trace", "on")
        yield run, [headers for _, _, headers in site.header_log[before:]], browser


def test_six_agent_tests_pass_in_the_remote_browser_and_only_it_loads_the_pages(six: Six) -> None:
    run, headers, _ = six
    assert run.exit_code == 0, run.stdout + run.stderr
    remote = [(t["name"], t["status"]) for t in run.results["tests"] if t["name"].startswith("remote ")]
    assert remote == [(f"remote {i}", "passed") for i in range(6)]
    pages = [h for h in headers if not h.get("User-Agent", "").startswith("python-httpx")]  # the run's preview check
    assert len(pages) >= 6 and {h.get("User-Agent") for h in pages} == {USER_AGENT}


def test_each_test_keeps_its_trace_and_screenshots_as_in_a_local_browser(six: Six) -> None:
    run, _, _ = six
    for test in run.results["tests"]:
        assert (run.out / test["artifacts"]["final_screenshot"]).read_bytes().startswith(b"\x89PNG"), test["name"]
        with zipfile.ZipFile(run.out / test["artifacts"]["trace"]) as trace:
            assert any(name.endswith(".trace") for name in trace.namelist()), test["name"]


def test_the_remote_browser_holds_none_of_the_runs_pages_and_still_runs(six: Six, site: DemoSite) -> None:
    _, _, browser = six
    assert browser.proc.poll() is None
    assert browser.pages_at(site.url) == []
    assert [t["url"] for t in browser.targets() if t["type"] == "page"] == ["about:blank"]  # its own, from its start


@pytest.mark.parametrize("flow", list(DIALOG_FLOWS))
def test_dialogs_are_answered_in_the_remote_browser_as_in_a_local_one(six: Six, flow: str) -> None:
    run, _, _ = six
    assert run.test(f"{flow} 1")["status"] == "passed", run.test(f"{flow} 1")
    answered_as_asked(run, flow, f"{flow} 1")


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGSTOP], ids=["killed", "hangs"])
def test_a_remote_browser_killed_or_hung_mid_run_errors_its_test_saying_so(tmp_path: Path, site: DemoSite, how: int) -> None:
    with remote_chromium() as browser, SignallingLLM(SCENARIOS, on_done=lambda _: os.killpg(browser.proc.pid, how)) as llm:
        run = _run(tmp_path, KILLED, site, llm, browser)  # as the agent's answer is made, before it is sent
    [test] = run.results["tests"]
    assert (test["status"], test["reason"]) == ("errored", f"the remote browser at {browser.url} stopped answering"), test
    assert run.exit_code == 1
