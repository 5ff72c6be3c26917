"""A pytest plugin for bench/suite.py: what each test file costs and why (wall, CPU-seconds, CLI runs, agent turns).

Loaded with `-p file_costs` (bench/ on PYTHONPATH) in pytest and in each xdist worker. Every phase of a test (setup,
call, teardown) adds to its file: the wall seconds, the CPU-seconds of the worker's process tree (the worker, the
browsers and CLI processes it started, living or reaped), the `preview-qa` runs started (in the process, or as one of
their own), the scripted LLM's requests and the seconds it held them back (latency, a turn's delay), and the seconds
the test's own thread slept. A module's fixture counts in the phase that ran it (its first test's setup), a session
fixture in the first file that asked for it. Each worker appends one JSON line a phase to $PREVIEW_QA_FILE_COSTS.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Generator
from pathlib import Path
from typing import Any

import psutil
import pytest

_COUNTS: Counter[str] = Counter()  # "cli", "llm", "held_s", "slept_s" since the phase began
_COUNTS_LOCK = threading.Lock()


def tree_cpu_s() -> float:
    """User + system CPU-seconds of this process and every living descendant, each with the children it reaped."""
    total = 0.0
    processes = [psutil.Process()]
    with contextlib.suppress(psutil.Error):
        processes += processes[0].children(recursive=True)
    for process in processes:
        try:
            t = process.cpu_times()
        except psutil.Error:
            continue  # ended between the listing and the read: its parent's reaped-children figure takes it
        total += t.user + t.system + t.children_user + t.children_system
    return total


def _count(key: str, amount: float = 1.0) -> None:
    with _COUNTS_LOCK:
        _COUNTS[key] += amount


def _patch_counters() -> None:
    """Count CLI runs, scripted LLM requests and held seconds, and the main thread's sleeps, without changing them."""
    from click.testing import CliRunner

    from preview_qa.demo.scripted_llm import ScriptedLLM

    invoke, popen, plan, sleep, llm_sleep = (
        CliRunner.invoke,
        subprocess.Popen.__init__,
        ScriptedLLM.plan,
        time.sleep,
        ScriptedLLM.sleep,
    )
    main = threading.main_thread()

    def counted_invoke(self: CliRunner, cli: Any, *args: Any, **kwargs: Any) -> Any:
        _count("cli")
        return invoke(self, cli, *args, **kwargs)

    def counted_popen(self: subprocess.Popen[Any], args: Any, *rest: Any, **kwargs: Any) -> None:
        words = [str(a) for a in args] if isinstance(args, list | tuple) else [str(args)]
        if "preview_qa" in words or any(w.endswith("preview-qa") for w in words):
            _count("cli")
        popen(self, args, *rest, **kwargs)

    def counted_plan(self: ScriptedLLM, body: Any, path: str) -> Any:
        _count("llm")
        return plan(self, body, path)

    def counted_llm_sleep(self: ScriptedLLM, seconds: float) -> bool:
        _count("held_s", max(seconds, 0.0))
        return llm_sleep(self, seconds)

    def counted_sleep(seconds: float) -> None:
        if threading.current_thread() is main:
            _count("slept_s", seconds)
        sleep(seconds)

    CliRunner.invoke = counted_invoke  # type: ignore[method-assign]
    subprocess.Popen.__init__ = counted_popen  # type: ignore[method-assign]
    ScriptedLLM.plan = counted_plan  # type: ignore[method-assign]
    ScriptedLLM.sleep = counted_llm_sleep  # type: ignore[method-assign]
    time.sleep = counted_sleep


def pytest_configure(config: pytest.Config) -> None:
    if os.environ.get("PREVIEW_QA_FILE_COSTS"):
        _patch_counters()


def _record(item: pytest.Item, when: str, wall: float, cpu_s: float) -> dict[str, Any]:
    with _COUNTS_LOCK:
        counts = dict(_COUNTS)
    return {
        "file": item.nodeid.split("::")[0],
        "test": item.nodeid,
        "when": when,
        "wall_s": round(wall, 3),
        "cpu_s": round(cpu_s, 3),
        "worker": os.environ.get("PYTEST_XDIST_WORKER", "main"),
        "at": round(time.time(), 3),
        **{k: round(v, 3) for k, v in counts.items()},
    }


def _phase(item: pytest.Item, when: str) -> Generator[None, object, object]:
    """Measure one phase around the hook's other implementations (a failing phase is measured too)."""
    target = os.environ.get("PREVIEW_QA_FILE_COSTS")
    if not target:
        return (yield)
    with _COUNTS_LOCK:
        _COUNTS.clear()
    clock, cpu, outcome = time.monotonic(), tree_cpu_s(), "failed"
    try:
        result = yield
        outcome = "passed"
        return result
    finally:
        record = {**_record(item, when, time.monotonic() - clock, tree_cpu_s() - cpu), "outcome": outcome}
        with Path(target).open("a", encoding="utf-8") as out:
            out.write(json.dumps(record) + "\n")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, object, object]:
    return (yield from _phase(item, "setup"))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, object, object]:
    return (yield from _phase(item, "call"))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, object, object]:
    return (yield from _phase(item, "teardown"))
