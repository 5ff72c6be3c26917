"""Runs the whole job on its own event loop and always ends: one signal cancels it, leftovers are abandoned in bounded time."""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import gc
import logging
import os
import shutil
import signal
import sys
import tempfile
import threading
from collections.abc import Awaitable, Coroutine, Iterator
from enum import IntEnum
from typing import Any, NoReturn, TypeVar

T = TypeVar("T")

LEFTOVER_GRACE_S = 1.0  # for leftover tasks to finish cancelling (a well-behaved one needs a few ms) before abandoning
ABANDON_GRACE_S = 10.0  # for one test's task, cut short, to end its teardown (closing a browser takes at most 7 s)
EXIT_GRACE_S = 5.0  # for the interpreter's own shutdown (it joins every thread a library left running)
SIGNALS = (signal.SIGTERM, signal.SIGINT)  # how CI cancels a job (GitHub: SIGINT, then SIGTERM, then SIGKILL)

log = logging.getLogger(__name__)


class ExitCode(IntEnum):
    """What a preview-qa process exits with (exits.py decides which, in one place, and what each tells)."""

    OK = 0
    FAILED = 1  # a test is at least as bad as --fail-on, or an output is missing
    USAGE = 2  # input the user can fix (errors.PreviewQaError), or a baseline that could not be used
    INTERNAL_ERROR = 3  # our own crash outside any test, as pytest numbers it (inside a test, that test errors)
    CANCELLED = 130  # a signal (or Ctrl-C) cancelled the run, as a shell reports SIGINT


@contextlib.contextmanager
def own_temp_folder() -> Iterator[str]:
    """A temp folder for the run, made the process's (and its children's) temp folder until the run ends, then removed
    with all it holds: what browser-use leaves in the temp folder (a downloads folder per profile, a folder per agent,
    throw-away profiles) and Chromium's own files. A run that is cancelled removes it too; only SIGKILL leaves it."""
    folder = tempfile.mkdtemp(prefix="pq-")
    before = tempfile.tempdir, os.environ.get("TMPDIR")
    tempfile.tempdir, os.environ["TMPDIR"] = folder, folder
    try:
        yield folder
    finally:
        tempfile.tempdir = before[0]
        if before[1] is None:
            os.environ.pop("TMPDIR", None)
        else:
            os.environ["TMPDIR"] = before[1]
        shutil.rmtree(folder, ignore_errors=True)


@contextlib.contextmanager
def children_temp_folder(folder: str) -> Iterator[None]:
    """`folder` is the temp folder (TMPDIR) of each process started meanwhile; this process's own stays as it was."""
    before = os.environ.get("TMPDIR")
    os.environ["TMPDIR"] = folder
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("TMPDIR", None)
        else:
            os.environ["TMPDIR"] = before


def run_bounded(main: Coroutine[Any, Any, T], grace_s: float = LEFTOVER_GRACE_S) -> T:
    """Run `main` to its end; the first SIGTERM or SIGINT cancels it, later ones are absorbed (the run is already ending).

    Unlike asyncio.run, it never waits unboundedly for the tasks left over when `main` ends: a library task that
    swallows its cancellation (browser-use's event bus does) is given `grace_s`, then abandoned and logged."""
    loop = asyncio.new_event_loop()
    loop.set_exception_handler(_log_unhandled)
    asyncio.set_event_loop(loop)
    task = loop.create_task(main)
    signals = _SignalCancels(loop, task)
    try:
        return loop.run_until_complete(task)
    finally:
        try:
            _abandon_leftovers(loop, grace_s)
        finally:
            signals.uninstall()
            asyncio.set_event_loop(None)
            loop.close()


class _SignalCancels:
    """While the loop runs: the first signal cancels the main task; after a signal, none may kill the process (the
    exit code stays the cancelled run's, never 143), since it is ending within bounded time anyway."""

    def __init__(self, loop: asyncio.AbstractEventLoop, task: asyncio.Task[Any]):
        self.task, self.received = task, 0
        self._installed = threading.current_thread() is threading.main_thread()
        if self._installed:
            for sig in SIGNALS:
                loop.add_signal_handler(sig, self._on_signal, sig)
        self._loop = loop

    def _on_signal(self, sig: signal.Signals) -> None:
        self.received += 1
        if self.received == 1:
            log.info("%s: cancelling the run", sig.name)
            self.task.cancel()
        else:
            log.info("%s: ignored, the run is already being cancelled", sig.name)

    def uninstall(self) -> None:
        """The loop's handlers go. After a signal, the next ones are ignored by the OS from then on, never by a Python
        handler: Python's finalization sets each signal with a Python handler back to its default (CPython's
        `_PySignal_Fini`), so a second signal during the interpreter's exit (GitHub's SIGTERM, 1 s after its SIGINT)
        ended a quickly cancelled run with -15. They are blocked while the handlers change, so none comes in between."""
        if not self._installed:
            return
        with _blocked(SIGNALS if self.received else ()):
            for sig in SIGNALS:
                self._loop.remove_signal_handler(sig)
                if self.received:
                    signal.signal(sig, signal.SIG_IGN)


@contextlib.contextmanager
def _blocked(signals: tuple[signal.Signals, ...]) -> Iterator[None]:
    """Signals held pending while the block runs, then delivered under the handlers it set."""
    before = signal.pthread_sigmask(signal.SIG_BLOCK, signals)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


async def within(main: Awaitable[T], limit_s: float, grace_s: float = ABANDON_GRACE_S) -> T:
    """`main`'s result, or TimeoutError once `limit_s` has passed, as asyncio.wait_for; but `main`, then cancelled, is
    given at most `grace_s` to end and is abandoned past it (asyncio.wait_for waits for it without a bound, so a
    teardown hanging on a browser that no longer answers would hang the whole run). Cancelling the caller does the same."""
    task = asyncio.ensure_future(main)
    try:
        await asyncio.wait({task}, timeout=limit_s)
    finally:
        if not task.done():
            task.cancel()
            await asyncio.wait({task}, timeout=grace_s)  # cancelled again itself: the run is ending, it ends at once
            if not task.done():
                _abandon(task, grace_s)
                task.add_done_callback(lambda t: t.cancelled() or t.exception())  # nobody reads how it ends
    if task.done() and not task.cancelled():  # in time, or it ended its own way although cancelled (as wait_for)
        return task.result()
    raise TimeoutError


def _abandon_leftovers(loop: asyncio.AbstractEventLoop, grace_s: float) -> None:
    """Cancel every task still pending, wait at most `grace_s` for them, and abandon the ones that do not end."""
    leftovers = [t for t in asyncio.all_tasks(loop) if not t.done()]
    for t in leftovers:
        t.cancel()
    if leftovers:
        loop.run_until_complete(asyncio.wait(leftovers, timeout=grace_s))
    stuck = [t for t in leftovers if not t.done()]
    for t in stuck:
        _abandon(t, grace_s)
    for t in leftovers:
        if t.done() and not t.cancelled() and t.exception() is not None:
            log.info("a leftover task had failed: %s: %r", _describe(t), t.exception())
    _bounded(loop, loop.shutdown_asyncgens(), grace_s, "closing async generators")


def _abandon(task: asyncio.Task[Any], grace_s: float) -> None:
    log.info("abandoned a task that did not finish cancelling within %g s: %s", grace_s, _describe(task))
    # Destroying a pending task is expected here: do not let asyncio report it at interpreter exit.
    task._log_destroy_pending = False  # type: ignore[attr-defined]


def _bounded(loop: asyncio.AbstractEventLoop, step: Coroutine[Any, Any, None], grace_s: float, what: str) -> None:
    waiter = loop.create_task(step)
    done, _ = loop.run_until_complete(asyncio.wait({waiter}, timeout=grace_s))
    if not done:
        waiter.cancel()
        waiter._log_destroy_pending = False  # type: ignore[attr-defined]
        log.info("abandoned %s after %g s", what, grace_s)


def _log_unhandled(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """What asyncio would print on stderr (a library task's exception nobody retrieved, often at interpreter exit):
    it says nothing about the tests, so it is shown with --verbose only."""
    error = context.get("exception")
    log.info("%s%s", context.get("message", "unhandled error in a background task"), f": {error!r}" if error else "")


def _describe(task: asyncio.Task[Any]) -> str:
    coro = task.get_coro()
    name = getattr(coro, "__qualname__", None) or repr(coro)
    return f"{task.get_name()} ({name})"


def exit_with(code: int, within_s: float = EXIT_GRACE_S) -> NoReturn:
    """`sys.exit(code)`, and once the interpreter shuts down it ends within `within_s` with the same code, even when
    a thread a library left running would make it wait forever. Called in-process (click's CliRunner), it leaves the
    host process alone."""
    _exit_soon(code, within_s)
    sys.exit(code)


def _exit_soon(code: int, within_s: float) -> None:
    # The interpreter's last full garbage collection walks every object browser-use and pydantic made: seconds on a
    # busy runner, for memory the OS takes back anyway. Objects frozen at exit are left out of it.
    atexit.register(gc.freeze)

    def hard_exit() -> None:
        # Python's shutdown first calls its threading atexit functions, concurrent.futures' among them, which joins
        # every thread-pool worker (asyncio.to_thread's: one still importing browser-use under load took 25 s) while
        # the main thread still counts as alive; only the flag it sets tells that phase from a host that went on.
        if threading.main_thread().is_alive() and not getattr(threading, "_SHUTTING_DOWN", False):
            return  # no shutdown under way: the host process (a test) goes on
        alive = [t.name for t in threading.enumerate() if t is not threading.current_thread() and not t.daemon]
        log.info(
            "the interpreter did not exit within %g s (threads still running: %s); exiting with %d",
            within_s,
            ", ".join(alive) or "none",
            code,
        )
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):  # a closed or broken stream must not stop the exit
                stream.flush()
        os._exit(code)

    timer = threading.Timer(within_s, hard_exit)
    timer.daemon = True  # the interpreter does not wait for it; it only acts if the shutdown hangs
    timer.start()
