"""Process-table checks for the e2e tests: which processes a run left behind, found by the temp folder it ran with or
by its browsers' profiles; starting a run in the background, waiting on it as it goes; and a port nothing listens on."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil

from preview_qa.demo.scripted_llm import ScriptedLLM
from tests.conftest import clean_env, run_args
from tests.site import DemoSite


def running_with(text: str) -> list[str]:
    """Every live process (zombies aside) anywhere on the machine whose command line mentions `text`."""
    found = []
    for proc in psutil.process_iter(["pid", "cmdline", "status"]):
        cmdline = " ".join(proc.info["cmdline"] or [])
        if text in cmdline and proc.info["status"] != psutil.STATUS_ZOMBIE and proc.pid != os.getpid():
            found.append(f"{proc.pid}: {cmdline[:160]}")
    return found


def left_behind(tmp: Path, settle_s: float = 5.0) -> list[str]:
    """Processes still running with a profile (or anything else) under `tmp`, after giving the kernel a moment."""
    deadline = time.monotonic() + settle_s
    while running_with(str(tmp)) and time.monotonic() < deadline:
        time.sleep(0.2)
    return running_with(str(tmp))


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on: a connection to it is refused at once."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_env(tmp: Path, **extra: str) -> dict[str, str]:
    """The CLI's environment with its own temp folder: every browser profile it makes lies under `tmp`."""
    return clean_env(TMPDIR=str(tmp), **extra)


def start_cli(
    folder: Path, manifest: str, site: DemoSite, llm: ScriptedLLM, *extra: str, env: dict[str, str]
) -> subprocess.Popen[str]:
    """`preview-qa run` in the background against the fixture site; results go to folder/out."""
    path = folder / "qa.yml"
    path.write_text(textwrap.dedent(manifest), encoding="utf-8")
    return subprocess.Popen(
        [sys.executable, "-m", "preview_qa", *run_args(path, site.url, folder / "out", llm, *extra)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def short_tests(count: int) -> str:
    """A manifest of `count` short tests: the agent reads the price once and is done, a page check confirms it."""
    lines = ["version: 1", "defaults: {start: /product, timeout: 120}", "tests:"]
    lines += [
        f'  - {{name: "short {i:03d}", task: "[quick] Read the price.", expect: {{text: ["$19.99"]}}}}' for i in range(count)
    ]
    return "\n".join(lines) + "\n"


QUICK = [{"match": "[quick]", "turns": [{"done": {"status": "pass", "reason": "The price is $19.99."}}]}]


def chromium_profiles(pid: int) -> set[str]:
    """The --user-data-dir of every Chromium below process `pid`: what identifies our browsers on the process table."""
    found = set()
    try:
        children = psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return found
    for proc in children:
        try:
            found |= {a.split("=", 1)[1] for a in proc.cmdline() if a.startswith("--user-data-dir=")}
        except psutil.Error:
            continue
    return found


def processes_using(profiles: set[str]) -> list[str]:
    """Processes anywhere on the machine (orphans are re-parented) still running one of these browser profiles."""
    alive = []
    for proc in psutil.process_iter(["pid", "cmdline"]):
        cmdline = proc.info["cmdline"] or []
        if any(f"--user-data-dir={p}" in cmdline for p in profiles):
            alive.append(f"{proc.info['pid']}: {' '.join(cmdline)[:120]}")
    return alive


def wait_for(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.2)


def no_orphans_left(profiles: set[str]) -> None:
    assert profiles, "no Chromium was ever seen: the test proved nothing"
    deadline = time.monotonic() + 15  # the kernel may take a moment to reap
    while processes_using(profiles) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert processes_using(profiles) == []


def wait_until_asked(proc: subprocess.Popen[str], llm: ScriptedLLM, tag: str, times: int, profiles: set[str]) -> None:
    """Wait until the LLM was asked `times` times about the task tagged `tag`; note every Chromium seen meanwhile."""

    def asked() -> bool:
        profiles.update(chromium_profiles(proc.pid))
        assert proc.poll() is None, proc.communicate()
        return sum(tag in json.dumps(body) for body in list(llm.requests)) >= times

    wait_for(asked, 180, f"the LLM to be asked about {tag} {times} time(s)")


@contextlib.contextmanager
def short_tmp() -> Iterator[Path]:
    """A TMPDIR for one CLI run, so that every browser profile it makes is found under it; short enough for
    Chromium, which puts a Unix socket below TMPDIR (at most 107 bytes: pytest's tmp_path is too long)."""
    path = Path(tempfile.mkdtemp(prefix="pq-", dir="/tmp"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
