"""Prints how fast and cheap preview-qa runs (issue 28), each figure beside its anchor measured in the same run: one
agent test against a bare browser-use script, concurrency against the CPU-bound ideal, 8 replays against the same
tests in bare Playwright, memory per further concurrent test, a 3-step replay's test time, and a todo test that types
into one field three times (replayed, then drifted).

    python bench/speed.py                       # all of them, 1 s scripted LLM latency, best of 3
    python bench/speed.py replay --repeat 1 --latency 0.5

Everything runs on this machine: the fixture shop (DemoSite), the scripted OpenAI-compatible LLM (ScriptedLLM, with
the latency asked for), and `preview-qa run` as a user runs it, in a subprocess. Times are wall clock, process start
included; each figure is the best of --repeat runs, because other work on the machine only ever makes a run slower.
Beside each time: the CPU-seconds of the command's own process tree (its reaped children's rusage) and of the whole
machine (/proc/stat: the fixture site and the LLM server too, and any other work, so run it on a quiet machine).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
from fixture_site import DemoSite, todo_turns

from preview_qa.agent.browsers.chromium import find_chromium
from preview_qa.demo.scripted_llm import ScriptedLLM

HERE = Path(__file__).parent
PASSWORD = "bench-password"
TASK = "[bench] Log in as demo@acme.test and check that the dashboard greets them (test {n})."
STEPS = [
    {
        "actions": [
            {"input": {"element": "Email", "text": "demo@acme.test"}},
            {"input": {"element": "Password", "text": PASSWORD}},
            {"click": {"element": "Log in"}},
        ]
    },
    {"done": {"status": "pass", "reason": "The dashboard says Signed in as demo@acme.test."}},
]
SCENARIO = {"name": "bench", "match": "[bench]", "turns": STEPS}
REPLAY_TESTS = 8
THREE_STEPS = [
    {"actions": [{"input": {"element": "Email", "text": "demo@acme.test"}}]},
    {"actions": [{"input": {"element": "Password", "text": PASSWORD}}]},
    {"actions": [{"click": {"element": "Log in"}}]},
    {"done": {"status": "pass", "reason": "The dashboard says Signed in as demo@acme.test."}},
]


@dataclass
class Measure:
    """One process run: its wall time, the CPU-seconds of its process tree (browsers included), the peak memory of its
    process tree, and the LLM requests it made."""

    seconds: float
    peak_mb: float
    agent_requests: int
    cpu_s: float = 0.0  # the command's process tree, user + system
    busy_s: float = 0.0  # the whole machine's busy CPU-seconds meanwhile (/proc/stat)
    quiet_s: float = 0.0  # seconds in which the machine was less than half a core busy (0.25 s samples)
    quiet_waiting: float = 0.0  # the mean number of LLM requests waiting for their answer in those seconds
    results: dict[str, Any] = field(default_factory=dict)

    def __str__(self) -> str:
        return f"{self.seconds:5.1f} s ({self.cpu_s:5.1f} CPU-s, machine {self.busy_s:5.1f})"


def goal(value: float, limit: float, unit: str = "", at_most: bool = True) -> str:
    """`value` against its goal, at once readable: the goal and whether it is met."""
    met = value <= limit if at_most else value >= limit
    return f"goal {'<=' if at_most else '>='} {limit:g}{unit}: {'met' if met else 'MISSED'}"


def busy_cpu_s() -> float:
    """The machine's busy CPU-seconds since boot (every state of /proc/stat's first line but idle and iowait)."""
    with open("/proc/stat", encoding="ascii") as stat:
        fields = [int(v) for v in stat.readline().split()[1:]]
    return (sum(fields[:8]) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")


def children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


@contextmanager
def services(
    latency: float, scenarios: list[dict[str, Any]] | None = None, spread: float = 0.0
) -> Iterator[tuple[DemoSite, ScriptedLLM]]:
    with DemoSite(password=PASSWORD) as site, CountingLLM(scenarios or [SCENARIO], latency=latency, spread=spread) as llm:
        yield site, llm


class CountingLLM(ScriptedLLM):
    """The scripted LLM, counting in `waiting` the requests in their latency (whose answer the run waits for). With a
    `spread`, each answer's wait is drawn from latency x (1 - spread .. 1 + spread), the same mean, from a fixed seed,
    as a real provider's answers take longer or shorter."""

    def __init__(self, *args: Any, spread: float = 0.0, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.waiting = 0
        self._counting = threading.Lock()
        self._spread, self._draw = spread, random.Random(28)

    def sleep(self, seconds: float) -> bool:
        with self._counting:
            self.waiting += 1
            seconds *= self._draw.uniform(1 - self._spread, 1 + self._spread)
        try:
            return super().sleep(seconds)
        finally:
            with self._counting:
                self.waiting -= 1


def manifest(folder: Path, tests: int, task: str = TASK) -> Path:
    lines = ["version: 1", "defaults: {max_steps: 10, timeout: 300}", "tests:"]
    for n in range(1, tests + 1):
        lines += [
            f"  - name: login {n}",
            "    start: /login",
            f"    task: {json.dumps(task.format(n=n))}",
            "    expect: {url: /dashboard, text: [Signed in as demo@acme.test]}",
        ]
    path = folder / f"qa-{tests}-{abs(hash(task))}.yml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def measured(command: list[str], llm: ScriptedLLM) -> Measure:
    """Run `command`, sampling the proportional memory (PSS) of its whole process tree, browsers included."""
    first = len(llm.calls)
    env = {**os.environ, "ANONYMIZED_TELEMETRY": "false"}
    clock, cpu, busy = time.monotonic(), children_cpu_s(), busy_cpu_s()
    proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    peak = 0.0
    done = threading.Event()

    cpu_seen: dict[tuple[int, float], float] = {}  # each process of the tree (pid, start) -> its CPU-seconds when last seen
    quiet: list[int] = []  # for each quarter second the machine was under half a core busy: the LLM requests waiting

    def sample() -> None:
        nonlocal peak
        root = psutil.Process(proc.pid)
        last = (time.monotonic(), busy_cpu_s())
        while not done.wait(0.25):
            now = (time.monotonic(), busy_cpu_s())
            if (now[1] - last[1]) / (now[0] - last[0]) < 0.5:
                quiet.append(getattr(llm, "waiting", 0))  # a plain ScriptedLLM (todo, bench/session.py) counts none
            last = now
            total = 0
            try:
                for p in [root, *root.children(recursive=True)]:
                    with suppress(psutil.NoSuchProcess, psutil.AccessDenied):
                        total += p.memory_full_info().pss
                        times = p.cpu_times()
                        cpu_seen[(p.pid, p.create_time())] = times.user + times.system
            except psutil.NoSuchProcess:
                return
            peak = max(peak, total / 2**20)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, stderr = proc.communicate()
    seconds, cpu_s, busy = time.monotonic() - clock, children_cpu_s() - cpu, busy_cpu_s() - busy
    done.set()
    sampler.join()
    # Both are lower bounds: the kernel's count misses a process whose parent died first (a browser's helpers, killed
    # with it), the samples miss each process's last quarter second.
    cpu_s = max(cpu_s, sum(cpu_seen.values()))
    if proc.returncode != 0:
        raise SystemExit(f"bench: {' '.join(command[:4])} ... exited {proc.returncode}:\n{stderr[-3000:]}")
    agent_requests = sum(1 for c in llm.calls[first:] if c["kind"] == "agent")
    quiet_waiting = sum(quiet) / len(quiet) if quiet else 0.0
    return Measure(seconds, peak, agent_requests, cpu_s, busy, len(quiet) * 0.25, quiet_waiting)


def preview_qa(llm: ScriptedLLM, site: DemoSite, qa: Path, out: Path, *extra: str) -> Measure:
    command = [
        sys.executable,
        "-m",
        "preview_qa",
        "run",
        str(qa),
        "--base-url",
        site.url,
        "--out",
        str(out),
        "--llm-base-url",
        llm.url,
        "--api-key",
        "bench",
        "--model",
        "scripted",
        *extra,
    ]
    m = measured(command, llm)
    m.results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    failed = [t["name"] for t in m.results["tests"] if t["status"] != "passed"]
    if failed:
        raise SystemExit(f"bench: {failed} did not pass; see {out}")
    return m


def best(runs: list[Measure]) -> Measure:
    return min(runs, key=lambda m: m.seconds)


def overhead(latency: float, repeat: int, work: Path) -> None:
    ours, bare = [], []
    with services(latency) as (site, llm):
        qa = manifest(work, 1)
        for i in range(repeat):  # taken in turns, so that both see the same load on the machine
            ours.append(preview_qa(llm, site, qa, work / f"overhead-{i}", "--no-cache"))
            bare.append(
                measured(
                    [
                        sys.executable,
                        str(HERE / "bare_agent.py"),
                        "--llm-url",
                        llm.url,
                        "--start",
                        f"{site.url}/login",
                        "--task",
                        TASK.format(n=1),
                        "--chromium",
                        find_chromium(None, os.environ),
                    ],
                    llm,
                )
            )
    ratios = sorted(o.seconds / b.seconds for o, b in zip(ours, bare, strict=True))
    ratio = best(ours).seconds / best(bare).seconds
    print(f"overhead     1 agent test: preview-qa run {best(ours)}   bare browser-use Agent script {best(bare)}")
    print(f"             ratio {ratio:.2f} ({goal(ratio, 0.80)}; pairs in turns: {', '.join(f'{r:.2f}' for r in ratios)})")


def concurrency(latency: float, repeat: int, work: Path) -> None:
    """The same 8 tests twice: with every answer after the same latency, and with the latency varied around it."""
    for spread in (0.0, 0.5):
        ones, fours = [], []
        with services(latency, spread=spread) as (site, llm):
            qa = manifest(work, 8)
            for i in range(repeat):
                ones.append(preview_qa(llm, site, qa, work / f"c1-{spread}-{i}", "--no-cache", "--concurrency", "1"))
                fours.append(preview_qa(llm, site, qa, work / f"c4-{spread}-{i}", "--no-cache", "--concurrency", "4"))
        one, four = best(ones), best(fours)
        cores = os.cpu_count() or 1
        # #28's CPU-bound ideal: the run at 1's busy CPU-seconds spread over every core, no run can end before they are
        # done. It is not capped at the cores: a run at 1 that waits on its LLM half the time may gain more than 2x;
        # but never more than 4x, four tests at once (bench/wait.py's ideal, the same).
        ideal = min(4.0, one.seconds / (one.busy_s / cores))
        speedup = one.seconds / four.seconds
        each = (
            f"every answer after {latency:g} s"
            if not spread
            else f"answers after {latency * (1 - spread):g} to {latency * (1 + spread):g} s"
        )
        print(f"concurrency  8 agent tests, {each}, at --concurrency 1: {one}   at 4: {four}")
        print(
            f"             speed-up {speedup:.2f}x; the CPU-bound ideal on {cores} cores is {ideal:.2f}x (the run at 1 "
            f"needs {one.busy_s:.1f} busy CPU-s; at most 4x): {speedup / ideal:.0%} of it "
            f"({goal(speedup / ideal, 0.85, at_most=False)})"
        )
        print(
            f"             at 4 the machine was under half a core busy for {four.quiet_s:.1f} s, with "
            f"{four.quiet_waiting:.1f} LLM requests waiting for their answer on average meanwhile (at 1: {one.quiet_s:.1f} s)"
        )
        if not spread:
            per_test = (four.peak_mb - one.peak_mb) / 3
            print(
                f"memory       peak PSS of the whole process tree: {one.peak_mb:.0f} MB at concurrency 1, {four.peak_mb:.0f} "
                f"MB at 4: {per_test:.0f} MB per further concurrent test ({goal(per_test, 120, ' MB')})"
            )


def replay(latency: float, repeat: int, work: Path) -> None:
    firsts, seconds, floors, evidenced = [], [], [], []
    with services(latency) as (site, llm):
        qa = manifest(work, REPLAY_TESTS)
        for i in range(repeat):  # the three taken in turns, so that all see the same load on the machine
            cache = work / f"cache-{i}"
            firsts.append(preview_qa(llm, site, qa, work / f"record-{i}", "--cache", str(cache), "--concurrency", "4"))
            seconds.append(preview_qa(llm, site, qa, work / f"replay-{i}", "--cache", str(cache), "--concurrency", "4"))
            floors.append(bare_playwright(site, llm, REPLAY_TESTS, 4))
            evidenced.append(bare_playwright(site, llm, REPLAY_TESTS, 4, evidence=True))
    first, second, floor = best(firsts), best(seconds), best(floors)
    paths = {t["path"] for m in seconds for t in m.results["tests"]}
    print(
        f"replay       {REPLAY_TESTS} tests at --concurrency 4, first run (agent): {first}, {first.agent_requests} agent "
        f"LLM requests"
    )
    print(
        f"             second run ({'/'.join(sorted(paths))}): {second}, "
        f"{max(m.agent_requests for m in seconds)} agent LLM requests (goal 0), {first.seconds / second.seconds:.2f}x "
        "faster than the first"
    )
    ratio = second.seconds / floor.seconds
    print(f"             the same tests in bare Playwright (bench/bare_playwright.py): {floor}")
    print(f"             ratio {ratio:.2f} ({goal(ratio, 1.10)})")
    kept = best(evidenced)
    print(
        f"             bare Playwright keeping preview-qa's evidence (a trace, a screenshot a step, a route; no goal): "
        f"{kept}, so {second.seconds / kept.seconds:.2f}x; that evidence alone costs bare Playwright "
        f"{kept.seconds / floor.seconds:.2f}x"
    )


def bare_playwright(
    site: DemoSite, llm: ScriptedLLM, tests: int, concurrency: int, durations: Path | None = None, evidence: bool = False
) -> Measure:
    """The same login tests in bench/bare_playwright.py (each test's own wall time written to `durations`; with
    preview-qa's evidence of a replay if `evidence`)."""
    command = [sys.executable, str(HERE / "bare_playwright.py"), "--base-url", site.url, "--tests", str(tests)]
    command += ["--concurrency", str(concurrency), "--password", PASSWORD, "--chromium", find_chromium(None, os.environ)]
    command += (["--durations", str(durations)] if durations else []) + (["--evidence"] if evidence else [])
    return measured(command, llm)


def replay3(latency: float, repeat: int, work: Path) -> None:
    """A 3-step test (email, password, log in), recorded once, then replayed: the test's own time, process start aside;
    against the same test in bare Playwright, one in a process of its own too, in turns."""
    task = "[three] Log in step by step as demo@acme.test (test {n})."
    times, bare, evidenced = [], [], []
    with services(latency, [{"name": "three", "match": "[three]", "turns": THREE_STEPS}]) as (site, llm):
        qa = manifest(work, 1, task)
        cache = work / "cache-three"
        preview_qa(llm, site, qa, work / "three-record", "--cache", str(cache))
        for i in range(repeat):
            m = preview_qa(llm, site, qa, work / f"three-replay-{i}", "--cache", str(cache))
            [test] = m.results["tests"]
            if (test["path"], test["steps"]) != ("replayed", 4):
                raise SystemExit(f"bench: the 3-step test was not replayed completely: {test}")
            times.append((test["duration_s"], phases(work / f"three-replay-{i}", test), m))
            anchor = bare_playwright(site, llm, 1, 1, work / f"three-bare-{i}.txt")
            bare.append((float((work / f"three-bare-{i}.txt").read_text()), anchor))
            bare_playwright(site, llm, 1, 1, work / f"three-evidence-{i}.txt", evidence=True)
            evidenced.append(float((work / f"three-evidence-{i}.txt").read_text()))
    fastest, where, run = min(times, key=lambda t: t[0])
    launch = sum(row["wall_s"] for row in where if row["phase"].startswith("of which launching the browser"))
    bare_s, bare_run = min(bare, key=lambda t: t[0])
    print(
        f"replay3      a 3-step test replayed: {fastest - launch:.2f} s test wall time without its worker's browser "
        f"launch ({goal(fastest - launch, 1.0, ' s')}), {fastest:.2f} s with it ({goal(fastest, 1.8, ' s')}); best of "
        f"{len(times)}, all: {', '.join(f'{t:.2f}' for t, _, _ in times)}"
    )
    print(
        f"             the same test in bare Playwright (its context opened to closed, the network idle before its "
        f"checks): {bare_s:.2f} s, so {(fastest - launch) / bare_s:.2f}x; its process {bare_run}"
    )
    print(
        f"             the same bare test keeping preview-qa's evidence (no goal): {min(evidenced):.2f} s, so "
        f"{(fastest - launch) / min(evidenced):.2f}x"
    )
    print(f"             the whole process: {run.seconds:.2f} s wall, {run.cpu_s:.2f} CPU-s (its browser included)")
    for row in where:
        print(f"             {row['phase']:<76} {row['wall_s']:6.3f} s")


def phases(out: Path, test: dict[str, Any]) -> list[dict[str, Any]]:
    """The phases of a test's time, from the `timings` line of its event log."""
    for line in (out / test["artifacts"]["events"]).read_text(encoding="utf-8").splitlines():
        event = json.loads(line)
        if event.get("type") == "timings":
            return list(event["phases"])
    return []


def todo(latency: float, repeat: int, work: Path) -> None:
    """Three items typed into one field, a select, a checkbox, a new tab, a navigation: recorded, replayed, then the
    same test against a rebuilt form."""
    with (
        DemoSite(password=PASSWORD) as site,
        ScriptedLLM([{"name": "todo", "match": "[todo]", "turns": todo_turns(site.url)}], latency=latency) as llm,
    ):
        qa = work / "todo.yml"
        qa.write_text(
            "version: 1\ndefaults: {max_steps: 10, timeout: 300}\ntests:\n  - name: todo\n    start: /todos\n"
            '    task: "[todo] Add three todos, finish the first, read the help and check the summary."\n'
            '    expect: {url: /todos/summary, text: ["3 todo(s), 1 done: Walk the dog, Feed the cat, '
            'Water the plants"]}\n',
            encoding="utf-8",
        )
        cache = work / "cache-todo"
        runs = {}
        for name in ("record", "replay", "changed"):
            if name == "changed":
                site.todo_version = 2
            m = preview_qa(llm, site, qa, work / f"todo-{name}", "--cache", str(cache))
            runs[name] = (m.results["tests"][0], m.agent_requests)
    for name, (test, requests) in runs.items():
        drift = f", {test['replay_drift']}" if test["replay_drift"] else ""
        print(
            f"todo         {name:8} {test['status']} via {test['path']}, {test['steps']} steps, {requests} agent LLM "
            f"requests, {test['duration_s']:.1f} s{drift}"
        )
    replayed, changed = runs["replay"][0], runs["changed"][0]
    print(
        "             goal: replayed with 0 LLM calls, then replay-fell-back, passed, drift named: "
        + (
            "met"
            if (replayed["path"], runs["replay"][1], changed["path"], changed["status"])
            == ("replayed", 0, "replay-fell-back", "passed")
            and changed["replay_drift"]
            else "MISSED"
        )
    )


def realistic(latency: float, repeat: int, work: Path) -> None:
    """Issue #70: 16 agent tests whose answers take 1.5 to 3.5 s (2.5 s +- 40%, varied per test and turn, as a real
    provider's do; --latency is not used), at --concurrency 1 and 8. The ideal for the run at 8 is the larger of the
    CPU-bound bound (the run at 1's CPU-seconds over the cores: its process tree's, browsers included, and the fixture
    site's and LLM server's in this process; the machine's busy CPU-s count other work too) and the 8-way split of its
    wall."""
    ones: list[tuple[Measure, float]] = []
    eights: list[tuple[Measure, float]] = []
    with services(2.5, spread=0.4) as (site, llm):
        qa = manifest(work, 16)
        for i in range(repeat):
            for runs, at in ((ones, "1"), (eights, "8")):
                servers = time.process_time()
                run = preview_qa(llm, site, qa, work / f"r{at}-{i}", "--no-cache", "--concurrency", at)
                runs.append((run, time.process_time() - servers))
    (one, servers_s), (eight, _) = min(ones, key=lambda r: r[0].seconds), min(eights, key=lambda r: r[0].seconds)
    cores, cpu_s = os.cpu_count() or 1, one.cpu_s + servers_s
    ideal = max(cpu_s / cores, one.seconds / 8)
    print(f"realistic    16 agent tests, answers after 1.5 to 3.5 s, at --concurrency 1: {one}   at 8: {eight}")
    print(
        f"             the ideal at 8 is {ideal:.1f} s (the larger of {cpu_s:.1f} CPU-s over {cores} cores and "
        f"{one.seconds:.1f} s / 8): {ideal / eight.seconds:.0%} of it ({goal(ideal / eight.seconds, 0.85, at_most=False)}); "
        f"{60 * 16 / eight.seconds:.1f} tests a minute"
    )
    print(f"             peak PSS at 8: {eight.peak_mb:.0f} MB ({(eight.peak_mb - one.peak_mb) / 7:.0f} MB per further test)")


BENCHES = {
    "overhead": overhead,
    "concurrency": concurrency,
    "realistic": realistic,
    "replay": replay,
    "replay3": replay3,
    "todo": todo,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "benches",
        nargs="*",
        metavar="BENCH",
        help=f"any of {', '.join(BENCHES)} (default: all; concurrency also measures memory)",
    )
    parser.add_argument("--latency", type=float, default=1.0, help="seconds the scripted LLM waits before each answer")
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure; the fastest counts")
    args = parser.parse_args()
    unknown = set(args.benches) - set(BENCHES)
    if unknown:
        parser.error(f"no bench called {', '.join(sorted(unknown))}; choose from {', '.join(BENCHES)}")
    print(
        f"preview-qa speed bench: scripted LLM latency {args.latency:g} s, best of {args.repeat}, "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}"
    )
    with tempfile.TemporaryDirectory(prefix="preview-qa-bench-") as tmp:
        for name in args.benches or list(BENCHES):
            BENCHES[name](args.latency, args.repeat, Path(tmp))


if __name__ == "__main__":
    main()
