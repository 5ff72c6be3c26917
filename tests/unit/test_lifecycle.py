"""The run's event loop always ends: a library task that swallows its cancellation, a second signal, or a thread left
running cannot keep the process alive or change its exit code."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from bubus import BaseEvent, EventBus

from preview_qa.lifecycle import SIGNALS, exit_with, own_temp_folder, run_bounded, within


class Ping(BaseEvent):
    pass


@pytest.fixture
def restore_signals() -> Iterator[None]:
    saved = {sig: signal.getsignal(sig) for sig in SIGNALS}
    yield
    for sig, handler in saved.items():
        signal.signal(sig, handler)


async def leaves_an_event_bus_running() -> str:
    """What browser-use does when a browser session is not stopped: its bubus bus keeps polling, and its loop task
    swallows every cancellation (asyncio.run would wait for it forever)."""
    bus = EventBus()
    bus.on(Ping, lambda event: None)
    await bus.dispatch(Ping())
    return "the result"


@pytest.mark.timeout(60)
def test_a_task_that_never_finishes_cancelling_is_abandoned_after_the_grace(
    caplog: pytest.LogCaptureFixture, restore_signals: None
) -> None:
    caplog.set_level(logging.INFO, logger="preview_qa.lifecycle")
    clock = time.monotonic()
    assert run_bounded(leaves_an_event_bus_running(), grace_s=0.5) == "the result"
    assert time.monotonic() - clock < 10
    assert any("abandoned a task" in r.getMessage() and "_run_loop" in r.getMessage() for r in caplog.records)


async def hangs_in_its_teardown(never: asyncio.Event, torn_down: list[str]) -> str:
    """A test whose teardown awaits a browser that no longer answers: it never ends once cancelled."""
    try:
        await never.wait()
        return "the result"
    finally:
        torn_down.append("started")
        await asyncio.shield(never.wait())


@pytest.mark.timeout(60)
def test_a_bound_holds_even_when_the_cancelled_work_hangs_in_its_teardown(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="preview_qa.lifecycle")

    async def main() -> tuple[str, list[str], float]:
        torn_down: list[str] = []
        clock = time.monotonic()
        try:
            await within(hangs_in_its_teardown(asyncio.Event(), torn_down), 0.2, grace_s=0.3)
        except TimeoutError:
            return "timed out", torn_down, time.monotonic() - clock
        return "returned", torn_down, time.monotonic() - clock

    outcome, torn_down, took = run_bounded(main(), grace_s=0.1)
    assert (outcome, torn_down) == ("timed out", ["started"]) and 0.5 <= took < 5  # asyncio.wait_for: never
    assert any("abandoned a task" in r.getMessage() and "hangs_in_its_teardown" in r.getMessage() for r in caplog.records)


def test_within_its_bound_the_result_or_the_error_is_the_works_own() -> None:
    async def fails() -> None:
        raise ValueError("its own")

    async def main() -> str:
        with pytest.raises(ValueError, match="its own"):
            await within(fails(), 5)
        return await within(asyncio.sleep(0, "in time"), 5)

    assert asyncio.run(main()) == "in time"


@pytest.mark.timeout(60)
def test_the_first_signal_cancels_and_the_next_ones_are_absorbed(restore_signals: None) -> None:
    async def main() -> str:
        os.kill(os.getpid(), signal.SIGINT)
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            os.kill(os.getpid(), signal.SIGTERM)  # GitHub's second signal, while the run is shutting down
            await asyncio.sleep(0.3)  # not cancelled again, and the process not killed
            return "cancelled once"
        return "not cancelled"

    assert run_bounded(main(), grace_s=0.5) == "cancelled once"
    # ignored by the OS, not by a Python handler, which the interpreter's finalization would set back to the default
    assert [signal.getsignal(sig) for sig in SIGNALS] == [signal.SIG_IGN] * len(SIGNALS)
    os.kill(os.getpid(), signal.SIGTERM)  # after the loop: still absorbed, the cancelled process is on its way out
    time.sleep(0.1)


@pytest.mark.timeout(60)
def test_without_a_signal_the_previous_handlers_come_back(restore_signals: None) -> None:
    async def main() -> int:
        return 1

    before = signal.getsignal(signal.SIGTERM)
    assert run_bounded(main()) == 1
    assert signal.getsignal(signal.SIGTERM) == before


EXIT_SCRIPT = """
import concurrent.futures, threading, time
from preview_qa.lifecycle import exit_with
{stuck}
print("result written", flush=True)
exit_with({code}, within_s=1.0)
"""
STUCK = {  # neither is a daemon: the interpreter's exit joins it
    "a library's thread": 'threading.Thread(target=time.sleep, args=(600,), name="stuck-library-thread").start()',
    # asyncio.to_thread's pool: joined by concurrent.futures before the main thread counts as ended
    "a thread-pool worker": "concurrent.futures.ThreadPoolExecutor(1).submit(time.sleep, 600)",
}


@pytest.mark.parametrize("stuck", list(STUCK))
@pytest.mark.parametrize("code", [0, 1, 2, 3, 130])
def test_the_process_exits_with_its_code_although_a_thread_would_keep_it_alive(code: int, stuck: str) -> None:
    clock = time.monotonic()
    script = textwrap.dedent(EXIT_SCRIPT.format(code=code, stuck=STUCK[stuck]))
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert (proc.returncode, proc.stdout) == (code, "result written\n")
    assert time.monotonic() - clock < 30


def test_called_in_process_it_leaves_the_host_process_alone() -> None:
    with pytest.raises(SystemExit) as exited:
        exit_with(7, within_s=0.2)  # as click's CliRunner runs a command inside a test
    assert exited.value.code == 7
    time.sleep(0.6)  # past the bound: this process (pytest) is still here


@pytest.mark.parametrize("fails", [False, True])
def test_what_a_run_and_its_children_leave_in_the_temp_folder_goes_with_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fails: bool
) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)
    with pytest.raises(RuntimeError) if fails else contextlib.nullcontext(), own_temp_folder() as folder:
        assert Path(folder).parent == tmp_path
        tempfile.mkdtemp(prefix="browser-use-downloads-")  # a library's leftover
        subprocess.run(["sh", "-c", 'mkdir "$TMPDIR/.org.chromium.Chromium.x"'], check=True)  # a child's
        assert len(list(Path(folder).iterdir())) == 2
        if fails:
            raise RuntimeError("the run broke")
    assert list(tmp_path.iterdir()) == []
    assert os.environ["TMPDIR"] == str(tmp_path) and tempfile.gettempdir() == str(tmp_path)
