"""What a CI user waits for (issue #50): the whole `preview-qa run` process, wall clock from its start to its exit,
against bare scripts doing the same visible work in the same bench run, and where a replay's time goes.

    python bench/wait.py                        # the three ratios and the replay's breakdown, each the median of 3
    python bench/wait.py replay --repeat 5      # any of: replay, concurrency, agent

- replay: 8 login tests replayed from the cache at --concurrency 4, against bench/bare_playwright.py --plain (one
  browser, a fresh 1280x800 context per test, fill two fields, a screenshot, click, expect the URL and the greeting,
  4 at a time). Goal: at most 1.10x. Then the replay's time by phase: the process (start and imports, the preview's
  check, the tests, the reports, the exit, from the moments its console lines appear) and a test's own phases (its
  `timings` event: context, browser launch, each step, settling, checks, screenshots, trace), each the median of the
  runs.
- concurrency: 8 agent tests (no cache, every scripted LLM answer after 1 s) at --concurrency 1 and 4: the run at 4
  against the CPU-bound ideal, the run at 1's CPU-seconds spread over the cores (and never under a quarter of its
  wall time: 4 at once). Goal: at least 85%. Then the ceiling the bench's own workload sets, its tests in step: the
  run at 4's CPU over the cores, plus the answers each wave of 4 waits for together, plus what no test overlaps.
- agent: one agent test against bench/bare_agent.py, a browser-use Agent script with the same scripted LLM. Goal: at
  most 0.85x.

Each pair is run in turns, so that both sides see the same load; ratios are the median of the pairs' ratios. The
CPU-seconds are those of the command's process tree (Chromium and the Playwright driver included), which other work
on the machine moves less than wall time. `src/` is compiled first, as `pip install` compiles an installed package.
The goals are for a quiet 2-core machine: the load average is printed before and after each section.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import psutil
from speed import HERE, PASSWORD, STEPS, TASK, goal, manifest, services

from preview_qa.agent.browsers.chromium import find_chromium

TESTS = 8
LATENCY_S = 1.0  # every scripted LLM answer's wait


@dataclass
class Timed:
    """One process: its wall time from start to exit, its process tree's CPU-seconds, and when each line it printed
    appeared (seconds since its start)."""

    seconds: float
    cpu_s: float
    lines: list[tuple[float, str]] = field(default_factory=list)
    out: Path | None = None
    cpu_by_kind: dict[str, float] = field(default_factory=dict)  # Python, the Playwright driver, each kind of Chromium's

    def __str__(self) -> str:
        return f"{self.seconds:5.2f} s ({self.cpu_s:5.1f} CPU-s)"


def timed(command: list[str], out: Path | None = None, env: dict[str, str] | None = None) -> Timed:
    """Run `command` to its exit, timing it and its printed lines, and summing its process tree's CPU-seconds."""
    env = {**os.environ, "ANONYMIZED_TELEMETRY": "false", "COLUMNS": "200", **(env or {})}
    clock = time.monotonic()
    proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines: list[tuple[float, str]] = []
    seen: dict[tuple[int, float], float] = {}
    kinds: dict[tuple[int, float], str] = {}
    stderr: list[str] = []

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append((time.monotonic() - clock, line.rstrip("\n")))

    def sample() -> None:
        root = psutil.Process(proc.pid)
        while proc.poll() is None:
            try:
                for p in [root, *root.children(recursive=True)]:
                    try:
                        t, key = p.cpu_times(), (p.pid, p.create_time())
                        seen[key] = t.user + t.system
                        # Named again at every sample: Debian's `chromium` is a shell script that execs the
                        # browser, so a first sight may be `sh`.
                        kind = process_kind(p)
                        if kind != "unknown" or key not in kinds:
                            kinds[key] = kind
                    except psutil.Error:
                        pass
            except psutil.Error:
                return
            time.sleep(0.2)

    threads = [threading.Thread(target=read), threading.Thread(target=sample, daemon=True)]
    threads.append(threading.Thread(target=lambda: stderr.append(proc.stderr.read() if proc.stderr else "")))
    rusage = _children_cpu()
    for thread in threads:
        thread.start()
    proc.wait()
    seconds = time.monotonic() - clock
    threads[0].join()
    threads[2].join()
    # Both are lower bounds: the kernel's count misses a process whose parent died first (a browser's helpers), the
    # samples miss each process's last moments.
    cpu_s = max(_children_cpu() - rusage, sum(seen.values()))
    if proc.returncode != 0:
        raise SystemExit(f"bench: {' '.join(command[:5])} ... exited {proc.returncode}:\n{''.join(stderr)[-3000:]}")
    by_kind: dict[str, float] = {}
    for key, cpu in seen.items():
        by_kind[kinds[key]] = by_kind.get(kinds[key], 0.0) + cpu
    return Timed(seconds, cpu_s, lines, out, by_kind)


def process_kind(process: psutil.Process) -> str:
    """Python, the Playwright driver (node), or Chromium's browser process, renderer, GPU process..."""
    try:
        command = process.cmdline()
    except psutil.Error:
        return "unknown"
    program = Path(command[0]).name if command else "unknown"
    if "chrom" in program:
        return "Chromium " + next((a.split("=", 1)[1] for a in command if a.startswith("--type=")), "browser")
    return {"node": "the Playwright driver (node)"}.get(program, "Python" if program.startswith("python") else program)


def _children_cpu() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


# The preview-qa sources each figure is measured for: this checkout's, and with --before another checkout's, run in
# the same turns (both then see the same load on the machine)
SOURCES: dict[str, Path] = {"preview-qa run": HERE.parent / "src"}


def run_command(qa: Path, site_url: str, llm_url: str, out: Path, *extra: str) -> list[str]:
    """`preview-qa run` as a CI job runs it (its own process, its console on stdout)."""
    command = [sys.executable, "-m", "preview_qa", "run", str(qa), "--base-url", site_url, "--out", str(out)]
    return [*command, "--llm-base-url", llm_url, "--api-key", "bench", "--model", "scripted", *extra]


def every_test(run: Timed, key: str, value: str, said: str) -> Timed:
    """`run`, once every test in its results.json has `value` as its `key`; else the bench stops, naming the others."""
    assert run.out is not None
    results = json.loads((run.out / "results.json").read_text(encoding="utf-8"))
    others = [t["name"] for t in results["tests"] if t[key] != value]
    if others:
        raise SystemExit(f"bench: {others} {said}; see {run.out}")
    return run


def passed(run: Timed) -> Timed:
    return every_test(run, "status", "passed", "did not pass")


def replayed(run: Timed) -> Timed:
    """A replay turn that replayed every test (a cache miss would time the agent instead)."""
    return every_test(run, "path", "replayed", "did not replay")


def ours(src: Path, command: list[str], out: Path) -> Timed:
    """`command` (a `preview-qa run`) with the sources at `src`, checked to have passed."""
    return passed(timed(command, out, {"PYTHONPATH": str(src)}))


def load() -> str:
    return f"load average {os.getloadavg()[0]:.1f}"


def median_ratio(ours: list[Timed], theirs: list[Timed], of: Callable[[Timed], float] = lambda t: t.seconds) -> float:
    return statistics.median(of(a) / of(b) for a, b in zip(ours, theirs, strict=True))


def side_by_side(runs: dict[str, list[Timed]], anchor: str, limit: float) -> None:
    """Each version's runs against the anchor's (the last entry), pair by pair."""
    *versions, (_, theirs) = runs.items()
    for label, runs_of in versions:
        print(f"  {label}: {', '.join(str(t) for t in runs_of)}")
    print(f"  {anchor}: {', '.join(str(t) for t in theirs)}")
    for label, runs_of in versions:
        ratio = median_ratio(runs_of, theirs)
        pairs = ", ".join(f"{a.seconds / b.seconds:.2f}" for a, b in zip(runs_of, theirs, strict=True))
        cpu = median_ratio(runs_of, theirs, lambda t: t.cpu_s)
        print(f"  {label}: ratio {ratio:.2f} (pairs in turns: {pairs}; {goal(ratio, limit)}); CPU-seconds {cpu:.2f}x")


def replay(repeat: int, work: Path) -> None:
    print(f"replay: {TESTS} login tests replayed at --concurrency 4 vs bare Playwright (--plain), {load()}")
    runs: dict[str, list[Timed]] = {label: [] for label in [*SOURCES, "bare Playwright"]}
    with services(LATENCY_S) as (site, llm):
        qa, cache = manifest(work, TESTS), work / "cache"
        replaying = ("--cache", str(cache), "--concurrency", "4")
        for n, src in enumerate(SOURCES.values()):  # each code's own recording: its cache key may differ
            ours(src, run_command(qa, site.url, llm.url, work / f"record-{n}", *replaying), work / f"record-{n}")
        bare_command = [sys.executable, str(HERE / "bare_playwright.py"), "--plain", "--base-url", site.url]
        bare_command += [
            "--tests",
            str(TESTS),
            "--concurrency",
            "4",
            "--password",
            PASSWORD,
            "--chromium",
            find_chromium(None, os.environ),
        ]
        for i in range(repeat):
            for n, (label, src) in enumerate(SOURCES.items()):
                out = work / f"replay-{i}-{n}"
                runs[label].append(replayed(ours(src, run_command(qa, site.url, llm.url, out, *replaying), out)))
            runs["bare Playwright"].append(timed(bare_command))
        imports = import_seconds(run_command(qa, site.url, llm.url, work / "imports", *replaying))
    side_by_side(runs, "bare Playwright", 1.10)
    print(f"  {load()}")
    for label in SOURCES:
        breakdown(label, runs[label], imports if label == "preview-qa run" else None)


def import_seconds(command: list[str]) -> float:
    """Seconds of imports in one run under `-X importtime` (which itself slows them a little)."""
    proc = subprocess.run([command[0], "-X", "importtime", *command[1:]], capture_output=True, text=True, check=True)
    total_us = 0
    for line in proc.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            _, cumulative, name = line.removeprefix("import time:").split("|")
            if cumulative.strip().isdigit() and not name.startswith("  "):  # a top-level import: its children are in it
                total_us += int(cumulative)
    return total_us / 1e6


def breakdown(label: str, runs: list[Timed], imports_s: float | None) -> None:
    """The process's phases from its console lines, and a test's phases from its `timings` events, medians of the runs."""
    print(f"  where a replay run's time goes ({label}, median of the runs):")
    timelines = [process_phases(run) for run in runs]
    for name in timelines[0]:
        value = statistics.median(t[name] for t in timelines)
        print(f"    {name:<86} {value:6.2f} s")
        if name.startswith("process start") and imports_s is not None:
            print(f"    {'  of which imports (a run apart, under -X importtime)':<86} {imports_s:6.2f} s")
    kinds = sorted({k for run in runs for k in run.cpu_by_kind}, key=lambda k: -runs[0].cpu_by_kind.get(k, 0.0))
    print("  CPU-seconds by process (sampled every 0.2 s, so a little under the total):")
    for kind in kinds:
        print(f"    {kind:<86} {statistics.median(run.cpu_by_kind.get(kind, 0.0) for run in runs):6.2f}")
    per_test = [test_phases(run) for run in runs]
    names = list(dict.fromkeys(name for phases in per_test for name in phases))
    print("  a test's own phases (its `timings` event; the mean of its run's tests, then the median of the runs):")
    for name in names:
        value = statistics.median(p.get(name, 0.0) for p in per_test)
        print(f"    {name:<86} {value:6.3f} s")


def process_phases(run: Timed) -> dict[str, float]:
    """The process's wall time cut at its console's lines: the run's first line, the first test started, the last test
    finished, the results table (printed once every report is written), the exit."""
    moments = [t for t, _ in run.lines]
    texts = [text for _, text in run.lines]
    first = moments[0]
    started = next(t for t, text in run.lines if text.lstrip().startswith("…"))
    finished = max(t for t, text in run.lines if text.lstrip()[:1] in "✓✗!-" and "(" in text)
    table = next((t for t, text in zip(moments, texts, strict=True) if "preview-qa results" in text), moments[-1])
    return {
        "process start, imports, manifest and set-up (until the run's first line)": first,
        "the preview's readiness check (until the first test starts)": started - first,
        "the tests (the first started to the last finished)": finished - started,
        "reports (results.json, junit.xml, report.html; until the results table)": table - finished,
        "the table, closing the browsers, the process's exit": run.seconds - table,
        "the whole process": run.seconds,
    }


def test_phases(run: Timed) -> dict[str, float]:
    """Each phase of a test's `timings` event, the mean over the run's tests (a phase only some tests have, such as
    the browser's launch, counts 0 for the others)."""
    assert run.out is not None
    totals: dict[str, float] = {}
    tests = sorted((run.out / "tests").iterdir())
    for folder in tests:
        for line in (folder / "events.jsonl").read_text(encoding="utf-8").splitlines():
            event = json.loads(line)
            if event["type"] == "timings":
                for row in event["phases"]:
                    totals[row["phase"]] = totals.get(row["phase"], 0.0) + row["wall_s"]
                totals["the test, its timings' total"] = totals.get("the test, its timings' total", 0.0) + event["total_wall_s"]
    return {name: value / len(tests) for name, value in totals.items()}


def concurrency(repeat: int, work: Path) -> None:
    cores = os.cpu_count() or 1
    print(
        f"concurrency: {TESTS} agent tests, every answer after {LATENCY_S:g} s, at --concurrency 1 and 4, {cores} cores, {load()}"
    )
    runs: dict[tuple[str, int], list[Timed]] = {(label, n): [] for label in SOURCES for n in (1, 4)}
    with services(LATENCY_S) as (site, llm):
        qa = manifest(work, TESTS)
        for i in range(repeat):
            for (label, n), runs_of in runs.items():
                out = work / f"c{n}-{i}-{len(runs_of)}-{label.split()[0]}"
                runs_of.append(
                    ours(SOURCES[label], run_command(qa, site.url, llm.url, out, "--no-cache", "--concurrency", str(n)), out)
                )
    for label in SOURCES:
        ones, fours = runs[(label, 1)], runs[(label, 4)]
        shares = [ideal_s(one, cores) / four.seconds for one, four in zip(ones, fours, strict=True)]
        print(f"  {label} at 1: {', '.join(str(t) for t in ones)}")
        print(f"  {label} at 4: {', '.join(str(t) for t in fours)}")
        print(
            f"  {label}: the run at 4 against the CPU-bound ideal (the run at 1's CPU-seconds over {cores} cores, at least "
            f"a quarter of its wall time): {', '.join(f'{s:.0%}' for s in shares)}, median {statistics.median(shares):.0%} "
            f"({goal(statistics.median(shares), 0.85, at_most=False)}); speed-up "
            f"{statistics.median(o.seconds / f.seconds for o, f in zip(ones, fours, strict=True)):.2f}x"
        )
        ceilings = [ceiling_s(four, cores) for four in fours]
        at_most = statistics.median(ideal_s(one, cores) / c for one, c in zip(ones, ceilings, strict=True))
        reached = statistics.median(c / four.seconds for c, four in zip(ceilings, fours, strict=True))
        print(
            f"  {label}: the ceiling in step (the run at 4's CPU over {cores} cores, its waves' answers that overlap no CPU, "
            f"the process's start, browser launch and end): {', '.join(f'{c:.1f} s' for c in ceilings)}, so at most "
            f"{at_most:.0%} of the ideal; the run at 4 is at {reached:.0%} of that ceiling"
        )
    print(f"  {load()}")


def ideal_s(one: Timed, cores: int) -> float:
    """The fastest a run at --concurrency 4 could end: its CPU work spread over every core, and no faster than 4 of
    the run at 1's tests side by side."""
    return max(one.cpu_s / cores, one.seconds / 4)


def ceiling_s(four: Timed, cores: int) -> float:
    """The fastest the run at 4 could end with its tests in step, as the bench runs them (each answer after LATENCY_S): its
    CPU-seconds spread over every core, the answers its waves of 4 wait for together (no CPU work to overlap them), and
    what no test overlaps (the process until its first test starts and after its last ends, the browser's launch)."""
    phases, tests = process_phases(four), test_phases(four)
    waves = -(-TESTS // 4)
    answers = waves * len(STEPS) * LATENCY_S
    launch = tests.get("of which launching the browser (its worker's first test only)", 0.0) * TESTS
    alone = phases["the whole process"] - phases["the tests (the first started to the last finished)"] + launch
    return four.cpu_s / cores + answers + alone


def agent(repeat: int, work: Path) -> None:
    print(f"agent: one agent test (every answer after {LATENCY_S:g} s) vs a bare browser-use Agent script, {load()}")
    runs: dict[str, list[Timed]] = {label: [] for label in [*SOURCES, "bare browser-use"]}
    with services(LATENCY_S) as (site, llm):
        qa = manifest(work, 1)
        bare_command = [sys.executable, str(HERE / "bare_agent.py"), "--llm-url", llm.url, "--start", f"{site.url}/login"]
        bare_command += ["--task", TASK.format(n=1), "--chromium", find_chromium(None, os.environ)]
        for i in range(repeat):
            for n, (label, src) in enumerate(SOURCES.items()):
                out = work / f"agent-{i}-{n}"
                runs[label].append(ours(src, run_command(qa, site.url, llm.url, out, "--no-cache"), out))
            runs["bare browser-use"].append(timed(bare_command))
    side_by_side(runs, "bare browser-use", 0.85)
    print(f"  {load()}")


BENCHES = {"replay": replay, "concurrency": concurrency, "agent": agent}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("benches", nargs="*", metavar="BENCH", help=f"any of {', '.join(BENCHES)} (default: all)")
    parser.add_argument("--repeat", type=int, default=3, help="pairs per figure; the median counts")
    parser.add_argument(
        "--before", type=Path, metavar="SRC", help="also measure another checkout's src/ in the same turns (the code before)"
    )
    args = parser.parse_args()
    unknown = set(args.benches) - set(BENCHES)
    if unknown:
        parser.error(f"no bench called {', '.join(sorted(unknown))}; choose from {', '.join(BENCHES)}")
    if args.before is not None:
        SOURCES["before (--before)"] = args.before.resolve()
    for src in SOURCES.values():
        compileall.compile_dir(str(src), quiet=1)
    print(f"preview-qa wait bench: median of {args.repeat}, {os.cpu_count()} CPUs, {load()}")
    with tempfile.TemporaryDirectory(prefix="preview-qa-wait-") as tmp:
        for name in args.benches or list(BENCHES):
            BENCHES[name](args.repeat, Path(tmp))


if __name__ == "__main__":
    main()
