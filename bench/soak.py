"""Prints whether long and crowded runs always end (issue 16): wall time, hangs, browsers and files left, exit codes.

    python bench/soak.py                                   # 150 short tests, 4 at a time, one run
    python bench/soak.py --tests 8 --concurrency 8 --runs 3   # the stress case: many browsers start at once

Each run is `preview-qa run` as a user runs it, in a subprocess with its own TMPDIR, against the fixture shop and the
scripted LLM. A run that has not exited --hang-after seconds after its last result (report.html) counts as a hang
(and is killed). "Browsers left" counts every process still running with a profile under that TMPDIR after exit,
"files left" whatever the run left in it.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import psutil
from fixture_site import DemoSite

from preview_qa.demo.scripted_llm import ScriptedLLM

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.e2e.processes import QUICK, run_env, running_with, short_tests, start_cli  # noqa: E402


@dataclass
class Soak:
    """One run's figures."""

    seconds: float
    exit_code: int | None
    hung: bool
    browsers_left: int
    files_left: int  # anything the run left in its TMPDIR (profiles, downloads, Chromium's files)
    statuses: dict[str, int]
    retried_starts: int
    reasons: dict[str, int]  # of the tests that did not pass, with digits blanked so that alike ones count together


def soak(tests: int, concurrency: int, hang_after: float, site: DemoSite, llm: ScriptedLLM) -> Soak:
    folder = Path(tempfile.mkdtemp(prefix="pq-soak-", dir="/tmp"))  # short: Chromium puts a socket below TMPDIR
    tmp = folder / "t"
    tmp.mkdir()
    results, report = folder / "out" / "results.json", folder / "out" / "report.html"  # report.html: written last
    clock = time.monotonic()
    proc = start_cli(folder, short_tests(tests), site, llm.url, "--concurrency", str(concurrency), env=run_env(tmp))
    written_at: float | None = None
    while proc.poll() is None:
        if written_at is None and report.exists():
            written_at = time.monotonic()
        if written_at is not None and time.monotonic() - written_at > hang_after:
            break
        time.sleep(0.2)
    hung = proc.poll() is None
    if hung:
        for child in psutil.Process(proc.pid).children(recursive=True):
            child.kill()
        proc.kill()
    proc.communicate()
    seconds = time.monotonic() - clock
    time.sleep(2)  # the kernel may take a moment to reap
    left = len([p for p in running_with(str(tmp)) if "chrom" in p])
    files_left = len(list(tmp.iterdir()))
    statuses: dict[str, int] = {}
    reasons: dict[str, int] = {}
    retried = 0
    if results.exists():
        for test in json.loads(results.read_text(encoding="utf-8"))["tests"]:
            statuses[test["status"]] = statuses.get(test["status"], 0) + 1
            if test["status"] != "passed":
                reason = re.sub(r"\d+", "N", test["reason"])[:160]
                reasons[reason] = reasons.get(reason, 0) + 1
            events = folder / "out" / test.get("artifacts", {}).get("events", "-")
            retried += events.is_file() and "browser_start_failed" in events.read_text(encoding="utf-8")
    if hung or reasons:
        print(f"kept {folder} (a hang or a test that did not pass)")
    else:
        shutil.rmtree(folder, ignore_errors=True)
    return Soak(seconds, None if hung else proc.returncode, hung, left, files_left, statuses, retried, reasons)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tests", type=int, default=150)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--hang-after", type=float, default=60.0, help="seconds after results.json before a hang")
    args = parser.parse_args()
    print(
        f"{args.runs} run(s) of {args.tests} short tests at --concurrency {args.concurrency}; "
        f"load average {psutil.getloadavg()[0]:.1f} on {psutil.cpu_count()} cores"
    )
    with DemoSite(password="soak") as site, ScriptedLLM(QUICK) as llm:
        for n in range(1, args.runs + 1):
            s = soak(args.tests, args.concurrency, args.hang_after, site, llm)
            print(
                f"run {n}: {s.seconds:.0f} s wall, exit {s.exit_code}, hang {'YES' if s.hung else 'no'}, "
                f"browsers left {s.browsers_left}, files left in TMPDIR {s.files_left}, tests {s.statuses}, "
                f"tests with a retried browser start "
                f"{s.retried_starts}, load average now {psutil.getloadavg()[0]:.1f}",
                flush=True,
            )
            for reason, count in sorted(s.reasons.items(), key=lambda item: -item[1]):
                print(f"  {count} × {reason}")


if __name__ == "__main__":
    main()
