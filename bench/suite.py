"""Times the README's test command (issue #28 item 5: under 10 minutes on a 2-core machine, the same tests).

    python bench/suite.py              # the whole suite, as CI runs it
    python bench/suite.py -n 0         # any further arguments go to pytest: here, in one process

Prints the wall time beside the goal, the CPU-seconds of pytest and every process it waited for (its workers, the
CLI runs, the browsers whose parent collected them), and what share of the machine's cores that kept busy.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from speed import children_cpu_s

GOAL_S = 600.0
ROOT = Path(__file__).parent.parent


def main(extra: list[str]) -> int:
    clock, cpu = time.monotonic(), children_cpu_s()
    code = subprocess.call([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *extra], cwd=ROOT)
    seconds, cpu_s = time.monotonic() - clock, children_cpu_s() - cpu
    cores = os.cpu_count() or 1
    verdict = "met" if seconds <= GOAL_S else "MISSED"
    print(
        f"suite        {seconds / 60:.1f} min wall (goal <= {GOAL_S / 60:.0f} min: {verdict}), {cpu_s:.0f} CPU-s: "
        f"{cpu_s / (seconds * cores):.0%} of {cores} cores; pytest exited {code}"
    )
    return code


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
