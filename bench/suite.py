"""Times the README's test command (issue #28 item 5, #46 item 1: under 10 minutes on a 2-core machine, and green with
12 busy processes beside it) and names the slowest test files and why each takes its time.

    python bench/suite.py                          # the whole suite, as CI runs it
    python bench/suite.py -n 1 tests/e2e/test_x.py # any further arguments go to pytest: here one file, one worker
    python bench/suite.py --top 30 --costs f.jsonl # the 30 slowest files; keep the per-phase records in f.jsonl
    python bench/suite.py --runs 3 --load 12       # three runs, each beside 12 busy `yes` processes (load 12)

Prints the wall time beside the goal, the CPU-seconds of pytest and every process it waited for, and what share of
the machine's cores that kept busy; then, a line a file (bench/file_costs.py measures each test's phases): its wall
seconds, its CPU-seconds (the worker's process tree: steadier than the wall on a busy machine), the `preview-qa`
runs it started, the scripted LLM's requests and the seconds it held them back, the seconds the test slept, and the
wall seconds not spent on a CPU ("waits": a clock, a timeout, a latency, or the load); last, when each worker
finished its last file, since a worker that idles at the end is wall time lost. With --runs, one line a run at the end
(wall, result, the load average before it), as docs/dev/suite-time.md records them.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from speed import children_cpu_s

GOAL_S = 600.0
ROOT = Path(__file__).parent.parent
COLUMNS = ("wall_s", "cpu_s", "cli", "llm", "held_s", "slept_s")


def per_file(records: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """The records' figures summed by file, with the file's test count and its setup's share of the wall."""
    files: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for r in records:
        f = files[r["file"]]
        for key in COLUMNS:
            f[key] += float(r.get(key, 0.0))
        f["tests"] += r["when"] == "call"
        f["setup_s"] += float(r["wall_s"]) if r["when"] == "setup" else 0.0
    return files


def file_table(records: list[dict[str, Any]], top: int) -> str:
    rows = sorted(per_file(records).items(), key=lambda kv: -kv[1]["wall_s"])
    lines = [
        f"{'file':48} {'tests':>5} {'wall s':>7} {'CPU-s':>7} {'setup s':>7} {'runs':>4} {'turns':>5} "
        f"{'held s':>6} {'slept':>5} {'waits':>6}"
    ]
    for name, f in rows[:top]:
        waits = f["wall_s"] - f["cpu_s"]
        lines.append(
            f"{name.removeprefix('tests/'):48} {f['tests']:5.0f} {f['wall_s']:7.1f} {f['cpu_s']:7.1f} {f['setup_s']:7.1f} "
            f"{f['cli']:4.0f} {f['llm']:5.0f} {f['held_s']:6.1f} {f['slept_s']:5.1f} {waits:6.1f}"
        )
    total = {key: sum(f[key] for _, f in rows) for key in COLUMNS}
    lines.append(f"{len(rows)} files: {total['wall_s']:.0f} s of test time, {total['cpu_s']:.0f} CPU-s in the workers")
    return "\n".join(lines)


def worker_ends(records: list[dict[str, Any]], start: float) -> str:
    ends: dict[str, float] = defaultdict(float)
    for r in records:
        ends[r["worker"]] = max(ends[r["worker"]], float(r["at"]) - start)
    return "workers done at " + ", ".join(f"{w} {s / 60:.1f} min" for w, s in sorted(ends.items()))


def one_run(extra: list[str], top: int, costs: Path | None) -> tuple[int, float]:
    """One run of pytest with the file costs; prints its tables and returns (exit code, wall seconds)."""
    path = costs or Path(tempfile.mkstemp(prefix="suite-", suffix=".jsonl")[1])
    path.write_text("", encoding="utf-8")
    env = dict(os.environ, PREVIEW_QA_FILE_COSTS=str(path.resolve()))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT / "bench"), env.get("PYTHONPATH", "")) if p)
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "file_costs", *extra]
    start, clock, cpu, machine = time.time(), time.monotonic(), children_cpu_s(), machine_ticks()
    code = subprocess.call(command, cwd=ROOT, env=env)
    seconds, cpu_s = time.monotonic() - clock, children_cpu_s() - cpu
    busy_share = busy_between(machine, machine_ticks())
    cores = os.cpu_count() or 1
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    if not costs:
        path.unlink()
    print(file_table(records, top))
    print(worker_ends(records, start))
    verdict = "met" if seconds <= GOAL_S else "MISSED"
    print(
        f"suite        {seconds / 60:.1f} min wall (goal <= {GOAL_S / 60:.0f} min: {verdict}), {cpu_s:.0f} CPU-s: "
        f"{cpu_s / (seconds * cores):.0%} of {cores} cores; load average {os.getloadavg()[0]:.1f} at the end; "
        f"pytest exited {code}"
    )
    if busy_share is not None:  # what rusage misses: a killed browser's helpers are re-parented, their CPU not ours
        print(f"the machine's cores were busy {busy_share:.0%} of the wall (every process, /proc/stat)")
    return code, seconds


def machine_ticks() -> tuple[int, int] | None:
    """(busy, all) clock ticks of every core since boot, from /proc/stat; None where there is none."""
    try:
        fields = [int(v) for v in Path("/proc/stat").read_text(encoding="utf-8").split("\n", 1)[0].split()[1:9]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + fields[4]  # idle and iowait
    return sum(fields) - idle, sum(fields)


def busy_between(before: tuple[int, int] | None, after: tuple[int, int] | None) -> float | None:
    if before is None or after is None or after[1] == before[1]:
        return None
    return (after[0] - before[0]) / (after[1] - before[1])


def busy(processes: int) -> list[subprocess.Popen[bytes]]:
    """`processes` busy loops beside the suite (`yes > /dev/null`), as the issue's load 12."""
    return [subprocess.Popen(["yes"], stdout=subprocess.DEVNULL) for _ in range(processes)]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--top", type=int, default=20, help="how many of the slowest files to list")
    parser.add_argument("--costs", type=Path, help="keep the per-phase records (JSON lines) in this file")
    parser.add_argument("--runs", type=int, default=1, help="run the suite this many times, one after another")
    parser.add_argument("--load", type=int, default=0, help="busy processes (`yes`) beside each run")
    ours, extra = parser.parse_known_args(argv)
    lines, worst = [], 0
    for n in range(1, ours.runs + 1):
        before = os.getloadavg()[0]
        loops = busy(ours.load)
        try:
            code, seconds = one_run(extra, ours.top, ours.costs)
        finally:
            for loop in loops:
                loop.kill()
                loop.wait()
        worst = max(worst, code)
        minutes, rest = divmod(round(seconds), 60)
        lines.append(f"run {n}: {minutes} min {rest:02d} s, pytest exited {code}, load average {before:.1f} before it")
    if ours.runs > 1 or ours.load:
        print(f"{ours.runs} run(s) with {ours.load} busy processes beside each:", *lines, sep="\n  ")
    return worst


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
