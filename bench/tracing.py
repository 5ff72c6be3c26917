"""What a Playwright trace per test costs (--trace on against off): each test's duration, the trace's own phase
(stop and write), and the trace.zip's size, for the same scripted three-step tests. Prints figures; asserts nothing.

    python bench/tracing.py --repeat 3

The fixture site and the scripted LLM run on this machine; `preview-qa run` runs as a user runs it, in a subprocess,
one test at a time (--concurrency 1), so the other engineers' load on the machine is the only noise: each figure is
the best of --repeat runs.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from fixture_site import DemoSite

from preview_qa.demo.scripted_llm import ScriptedLLM

TESTS = 3
TURNS = [
    {"actions": [{"input": {"element": "Email", "text": "demo@acme.test"}}]},
    {"actions": [{"input": {"element": "Password", "text": "wrong-password"}}]},
    {"actions": [{"click": {"element": "Log in"}}]},
    {"done": {"status": "pass", "reason": "The login form answered."}},
]


def manifest() -> str:
    tests = "".join(
        f'  - name: login form {n}\n    start: /login\n    task: "[trace-bench] Try to log in ({n})."\n' for n in range(TESTS)
    )
    return f"version: 1\ndefaults: {{max_steps: 5, timeout: 120}}\ntests:\n{tests}"


def run(site: DemoSite, llm: ScriptedLLM, trace: str, folder: Path) -> tuple[list[float], list[float], list[int]]:
    (folder / "qa.yml").write_text(manifest(), encoding="utf-8")
    env = {**os.environ, "PREVIEW_QA_NO_CACHE": "1", "ANONYMIZED_TELEMETRY": "false"}
    subprocess.run(
        [
            sys.executable,
            "-m",
            "preview_qa",
            "run",
            str(folder / "qa.yml"),
            "--base-url",
            site.url,
            "--out",
            str(folder / "out"),
            "--llm-base-url",
            llm.url,
            "--api-key",
            "bench-key",
            "--model",
            "scripted",
            "--concurrency",
            "1",
            "--trace",
            trace,
        ],
        env=env,
        capture_output=True,
        timeout=600,
    )
    results = json.loads((folder / "out" / "results.json").read_text(encoding="utf-8"))
    durations = [t["duration_s"] for t in results["tests"]]
    phases, sizes = [], []
    for t in results["tests"]:
        events = (folder / "out" / t["artifacts"]["events"]).read_text(encoding="utf-8").splitlines()
        rows = [row for e in map(json.loads, events) if e["type"] == "timings" for row in e.get("phases", [])]
        phases += [row["wall_s"] for row in rows if str(row.get("phase", "")).startswith("trace")]
        if "trace" in t["artifacts"]:
            sizes.append((folder / "out" / t["artifacts"]["trace"]).stat().st_size)
    return durations, phases, sizes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    best: dict[str, tuple[float, list[float], list[int]]] = {}
    with DemoSite() as site, ScriptedLLM([{"match": "[trace-bench]", "turns": TURNS}]) as llm:
        for _ in range(args.repeat):
            for trace in ("off", "on"):
                with tempfile.TemporaryDirectory(prefix="trace-bench-") as tmp:
                    durations, phases, sizes = run(site, llm, trace, Path(tmp))
                median = statistics.median(durations)
                if trace not in best or median < best[trace][0]:
                    best[trace] = (median, phases, sizes)
    off, on = best["off"], best["on"]
    print(f"{TESTS} tests of 3 agent steps, one at a time, best of {args.repeat} runs each:")
    print(
        f"  test duration, median: --trace off {off[0]:.2f} s, --trace on {on[0]:.2f} s "
        f"(tracing costs {on[0] - off[0]:+.2f} s per test)"
    )
    if on[1]:
        print(f"  of which stopping the trace and reading the zip: median {statistics.median(on[1]):.2f} s")
    if on[2]:
        print(
            f"  trace.zip size: median {statistics.median(on[2]) / 1024:.0f} KiB (its film strip, the tests' own pictures, "
            "included: these tests have no secrets)"
        )


if __name__ == "__main__":
    main()
