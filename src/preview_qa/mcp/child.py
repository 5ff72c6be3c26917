"""A `preview-qa run` or `plan` started by a tool call, as a process of its own (it owns its event loop and signals,
and the server's stdout stays JSON-RPC): its output in its run folder, a tick while it runs, and, when the call is
cancelled or the server stops, SIGINT and a wait until it has ended, its browsers with it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import anyio
from anyio.abc import Process

CONSOLE = "console.txt"  # the child's stdout: the console table
STDERR = "stderr.txt"
TICK_S = 1.0
STOP_S = 120.0  # a cancelled run ends its tests and browsers well within this (lifecycle.py bounds its own exit)
KILL_S = 10.0
ERROR_PREFIX = "preview-qa: "
RUNNING: set[Process] = set()  # every child not yet ended: the server stops them all before it exits on a signal


@dataclass(frozen=True)
class Ended:
    """How the child ended: its exit code, and its last line on stderr (one sentence when it refused or crashed)."""

    code: int
    last_line: str


def command(*args: str) -> list[str]:
    """preview-qa's own command line, with the interpreter the server runs on."""
    return [sys.executable, "-m", "preview_qa", *args]


async def run_child(argv: list[str], cwd: Path, env: Mapping[str, str], logs: Path, tick: Callable[[], Awaitable[None]]) -> Ended:
    """Run `argv` to its end, calling `tick` about every second; a cancellation stops it first (SIGINT, then SIGKILL
    of its process group past STOP_S) and is raised again once it has ended."""
    with open(logs / CONSOLE, "wb") as out, open(logs / STDERR, "wb") as err:
        process = await anyio.open_process(
            argv, cwd=cwd, env=dict(env), stdin=subprocess.DEVNULL, stdout=out, stderr=err, start_new_session=True
        )
        RUNNING.add(process)
        try:
            while process.returncode is None:
                await tick()
                with anyio.move_on_after(TICK_S):
                    await process.wait()
        except BaseException:
            with anyio.CancelScope(shield=True):
                await stop(process)
            raise
        finally:
            RUNNING.discard(process)
    return Ended(process.returncode or 0, _last_line(logs / STDERR))


async def stop(process: Process) -> None:
    """SIGINT, as Ctrl-C would: the run cancels its tests, ends its browsers, writes its results and exits. One that
    has not ended after STOP_S is killed with every process of its group."""
    if process.returncode is not None:
        return
    process.send_signal(signal.SIGINT)
    with anyio.move_on_after(STOP_S):
        await process.wait()
        return
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        return
    with anyio.move_on_after(KILL_S):
        await process.wait()


async def stop_all() -> None:
    """Stop every child still running, side by side, each as `stop` does."""
    async with anyio.create_task_group() as group:
        for process in list(RUNNING):
            group.start_soon(stop, process)


def _last_line(path: Path) -> str:
    """The child's last line on stderr, without its `preview-qa: ` prefix (already redacted by its own stderr)."""
    try:
        lines = [line for line in path.read_text(encoding="utf-8", errors="replace").splitlines() if line.strip()]
    except OSError:
        return ""
    return lines[-1].removeprefix(ERROR_PREFIX).removeprefix("error: ") if lines else ""
