"""Process-table checks for the e2e tests: which processes a run left behind, found by the temp folder it ran with."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil

from preview_qa.demo.site import DemoSite
from tests.conftest import clean_env


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


def run_env(tmp: Path, **extra: str) -> dict[str, str]:
    """The CLI's environment with its own temp folder: every browser profile it makes lies under `tmp`."""
    return clean_env(TMPDIR=str(tmp), **extra)


def start_cli(folder: Path, manifest: str, site: DemoSite, llm_url: str, *extra: str,
              env: dict[str, str]) -> subprocess.Popen[str]:
    """`preview-qa run` in the background against the fixture site; results go to folder/out."""
    path = folder / "qa.yml"
    path.write_text(textwrap.dedent(manifest), encoding="utf-8")
    return subprocess.Popen(
        [sys.executable, "-m", "preview_qa", "run", str(path), "--base-url", site.url, "--out", str(folder / "out"),
         "--llm-base-url", llm_url, "--api-key", "k", "--model", "scripted", *extra],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def short_tests(count: int) -> str:
    """A manifest of `count` short tests: the agent reads the price once and is done, a page check confirms it."""
    lines = ["version: 1", "defaults: {start: /product, timeout: 120}", "tests:"]
    lines += [f'  - {{name: "short {i:03d}", task: "[quick] Read the price.", expect: {{text: ["$19.99"]}}}}'
              for i in range(count)]
    return "\n".join(lines) + "\n"


QUICK = [{"match": "[quick]", "turns": [{"done": {"status": "pass", "reason": "The price is $19.99."}}]}]
