"""A Chromium stand-in for PREVIEW_QA_CHROMIUM that fails to start the way real ones do on a busy machine.

FAKE_CHROMIUM_MODE:  no-port    runs, never opens its debugging port (and starts a helper process, as Chromium does)
                     dies       exits at once
                     flaky      dies on its first launch, then is the real Chromium (FAKE_CHROMIUM_REAL)
                     no-flags   becomes a process without Chromium's flags (a wrapper that drops them), never opens
                                its port: found only as the process we started
FAKE_CHROMIUM_LOG:   a file that gets one line per launch.

NoHandshake is a DevTools endpoint that answers /json/version, then never completes the WebSocket handshake.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from http.server import BaseHTTPRequestHandler

LAUNCHER = '#!/bin/sh\nexec {python} {script} "$@"\n'


def launcher(folder: str) -> str:
    """An executable to pass as PREVIEW_QA_CHROMIUM that runs this module."""
    path = os.path.join(folder, "fake-chromium")
    with open(path, "w", encoding="utf-8") as f:
        f.write(LAUNCHER.format(python=sys.executable, script=os.path.abspath(__file__)))
    os.chmod(path, 0o755)
    return path


class NoHandshake(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        if self.headers.get("Upgrade", "").lower() == "websocket":
            time.sleep(600)  # the handshake never completes
            return
        port = self.server.server_address[1]
        body = json.dumps({"Browser": "Fake/1.0", "webSocketDebuggerUrl": f"ws://127.0.0.1:{port}/devtools/browser/x"})
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, format: str, *args: object) -> None:
        pass


def main(args: list[str]) -> None:
    mode = os.environ["FAKE_CHROMIUM_MODE"]
    with open(os.environ["FAKE_CHROMIUM_LOG"], "a+", encoding="utf-8") as log:
        log.write("launch\n")
        log.seek(0)
        launches = len(log.readlines())
    if mode == "dies" or (mode == "flaky" and launches == 1):
        sys.exit(1)
    if mode == "no-flags":  # the same PID, no --user-data-dir: TMPDIR in its arguments lets the test find it
        os.execv(
            sys.executable,
            [sys.executable, "-c", "import time; time.sleep(600)", "fake-chromium-no-flags", os.environ.get("TMPDIR", "")],
        )
    if mode == "flaky":
        os.execv(os.environ["FAKE_CHROMIUM_REAL"], [os.environ["FAKE_CHROMIUM_REAL"], *args])
    # A helper without the profile flag, as Chromium's own are not always: only its parent ties it to the browser.
    subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import time; time.sleep(600)",
            f"fake-chromium-helper-of-{os.getpid()}",
            os.environ.get("TMPDIR", ""),
        ]
    )
    if mode == "no-port":
        time.sleep(600)


if __name__ == "__main__":
    main(sys.argv[1:])
