"""Where one test's time goes: wall (and, when asked, CPU) seconds per phase, announced in the test's event log."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import Any

import psutil

from preview_qa.events import Timings


class Phases:
    """Times the phases of one test. CPU is that of this process and every process it started (browsers, the
    Playwright driver), so it only means one test's CPU when one test runs at a time; reading it walks the process
    table, which is why it is off unless asked for (the bench asks)."""

    def __init__(self, measure_cpu: bool = False):
        self._process = psutil.Process() if measure_cpu else None
        self.rows: list[dict[str, Any]] = []
        self._started = time.monotonic()
        self._step: tuple[float, float | None] | None = None
        self._seen: dict[tuple[int, float], float] = {}  # (pid, start time): CPU seconds when last seen

    def cpu(self) -> float | None:
        """CPU seconds so far of this process tree. A process that has exited counts with what it had used when last
        seen (a browser's renderers are nobody's children to wait for once the browser is gone)."""
        if self._process is None:
            return None
        times = self._process.cpu_times()
        for child in self._process.children(recursive=True):
            with contextlib.suppress(psutil.Error):
                child_times = child.cpu_times()
                self._seen[(child.pid, child.create_time())] = child_times.user + child_times.system
        return times.user + times.system + sum(self._seen.values())

    @contextlib.contextmanager
    def __call__(self, name: str) -> Iterator[None]:
        wall, cpu = time.monotonic(), self.cpu()
        try:
            yield
        finally:
            self.add(name, wall, cpu)

    def add(self, name: str, wall_start: float, cpu_start: float | None) -> None:
        """A phase that began at `wall_start` (time.monotonic) with `cpu_start` (self.cpu()) and ends now."""
        cpu = self.cpu()
        self.rows.append(
            {
                "phase": name,
                "wall_s": round(time.monotonic() - wall_start, 3),
                "cpu_s": round(cpu - cpu_start, 3) if cpu is not None and cpu_start is not None else None,
            }
        )

    def part(self, name: str, wall_s: float) -> None:
        """A part of the phase before it, timed elsewhere (wall seconds only): "of which ..."."""
        self.rows.append({"phase": name, "wall_s": round(wall_s, 3), "cpu_s": None})

    def step_started(self) -> None:
        self._step = (time.monotonic(), self.cpu())

    def step_ended(self, name: str) -> None:
        if self._step is not None:
            self.add(name, *self._step)
            self._step = None

    def detail(self) -> Timings:
        return Timings(phases=self.rows, total_wall_s=round(time.monotonic() - self._started, 3))
