"""Each browser's processes are found by its profile folder (helpers without the flag through their parent) and killed,
and nothing outside that folder is ever touched."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from pathlib import Path

import psutil

from preview_qa.agent.browsers.launch import BrowserProcesses, _launch_said

BROWSER = """
import subprocess, sys, time
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)", "helper-without-the-flag"])
time.sleep(120)
"""


def fake_browser(profile: Path) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen([sys.executable, "-c", BROWSER, f"--user-data-dir={profile}"])
    deadline = time.monotonic() + 30
    while not psutil.Process(proc.pid).children() and time.monotonic() < deadline:
        time.sleep(0.05)
    return proc


def gone(proc: psutil.Process) -> bool:
    """Off the process table, or a zombie (dead, waiting for a parent that may never collect it)."""
    try:
        return not proc.is_running() or proc.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def test_a_browser_and_its_helper_are_found_and_killed(tmp_path: Path) -> None:
    browser = fake_browser(tmp_path / "test-1" / "profile-1")
    helper = psutil.Process(browser.pid).children()[0]
    processes = BrowserProcesses(str(tmp_path))
    assert {p.pid for p in processes.find()} == {browser.pid, helper.pid}
    assert asyncio.run(processes.end()) == []
    browser.wait(5)
    assert gone(helper)


def test_a_helper_whose_browser_died_first_is_still_killed(tmp_path: Path) -> None:
    browser = fake_browser(tmp_path / "profile-1")
    helper = psutil.Process(browser.pid).children()[0]
    processes = BrowserProcesses(str(tmp_path))
    processes.find()
    browser.kill()  # the helper is re-parented and no longer carries anything that ties it to the browser
    browser.wait(5)
    assert asyncio.run(processes.end()) == []
    assert gone(helper)


def test_a_browser_of_another_folder_is_left_alone(tmp_path: Path) -> None:
    other = fake_browser(Path(f"{tmp_path}-other") / "profile-1")  # same prefix, different folder
    try:
        assert BrowserProcesses(str(tmp_path)).kill() == []
        assert other.poll() is None
    finally:
        BrowserProcesses(f"{tmp_path}-other").kill()
        other.wait(5)


def test_a_failed_playwright_launch_says_what_the_browser_said_not_its_command_line() -> None:
    said = _launch_said(
        "BrowserType.launch: Target page, context or browser has been closed\nBrowser logs:\n\n"
        "<launching> /usr/bin/chromium --disable-field-trial-config --user-data-dir=/tmp/x\n<launched> pid=7\n"
        "[pid=7][err] Fontconfig error: cannot load default config file\n"
        "[pid=7] <process did exit: exitCode=1, signal=null>\n[pid=7] starting temporary directories cleanup\n"
        "Call log:\n  - <launching> /usr/bin/chromium --disable-field-trial-config\n"
        "  - [pid=7] <process did exit: exitCode=1, signal=null>\n"
    )
    assert said == (
        "BrowserType.launch: Target page, context or browser has been closed; [pid=7][err] Fontconfig error: cannot "
        "load default config file; [pid=7] <process did exit: exitCode=1, signal=null>"
    )
