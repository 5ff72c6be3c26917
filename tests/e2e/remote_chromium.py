"""A Chromium started apart from any run, as on a grid or in a service container: its own user agent (so that the
fixture site tells its requests apart), its DevTools port picked by itself and read from the file it writes."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from preview_qa.agent.browsers.chromium import find_chromium
from preview_qa.agent.browsers.launch import sandboxed

USER_AGENT = "remote-grid-test"
START_S = 60.0  # a bound on its start, not a delay: the port file is looked for until it is there


@dataclass
class RemoteChromium:
    proc: subprocess.Popen[bytes]
    port: int

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def targets(self) -> list[dict[str, Any]]:
        """What its /json/list shows: every page (and worker) open in it."""
        with urllib.request.urlopen(f"{self.url}/json/list", timeout=10) as answer:
            found: list[dict[str, Any]] = json.loads(answer.read())
        return found

    def pages_at(self, origin: str) -> list[str]:
        return [t["url"] for t in self.targets() if t.get("url", "").startswith(origin)]

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)


@contextlib.contextmanager
def remote_chromium() -> Iterator[RemoteChromium]:
    """A headless Chromium on a DevTools port of its own, killed (with its helpers) when the block ends."""
    with tempfile.TemporaryDirectory(prefix="pq-remote-", dir="/tmp") as profile:
        args = [
            find_chromium(None, os.environ),
            "--headless=new",
            "--remote-debugging-port=0",
            f"--user-data-dir={profile}",
            f"--user-agent={USER_AGENT}",
            "--no-first-run",
            "--disable-dev-shm-usage",
            *([] if sandboxed() else ["--no-sandbox"]),
            "about:blank",
        ]
        proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        browser = RemoteChromium(proc, _port(Path(profile) / "DevToolsActivePort", proc))
        try:
            yield browser
        finally:
            browser.kill()


def _port(path: Path, proc: subprocess.Popen[bytes]) -> int:
    deadline = time.monotonic() + START_S
    while time.monotonic() < deadline and proc.poll() is None:
        with contextlib.suppress(OSError, ValueError):
            port, _, rest = path.read_text(encoding="utf-8").partition("\n")
            if rest.strip():  # written whole
                return int(port)
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError(f"the remote Chromium wrote no DevTools port (exit {proc.poll()})")
