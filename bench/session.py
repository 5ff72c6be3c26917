"""Prints what use_state saves (issue 14): 5 tests that need a signed-in user, each logging in itself vs. one login
test (save_state) whose state the 5 start from (use_state). Tokens, LLM calls and wall time of each run.

    python bench/session.py                     # 1 s scripted LLM latency, concurrency 2, best of 3
    python bench/session.py --latency 0.5 --repeat 1 --concurrency 4

Same set-up as bench/speed.py: the fixture shop's /app pages (they show the user only with the session cookie and the
localStorage profile the login form sets), the scripted OpenAI-compatible LLM, `preview-qa run` in a subprocess,
no replay cache. Token counts are the scripted server's (about 4 characters a token), so compare them, not price them.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from fixture_site import APP_PAGES, DemoSite
from speed import PASSWORD, Measure, best, preview_qa

from preview_qa.demo.scripted_llm import ScriptedLLM

TESTS = 5
PAGES = [list(APP_PAGES)[n % len(APP_PAGES)] for n in range(TESTS)]  # /app pages, in turn
LOGIN_STEP = {
    "actions": [
        {"input": {"element": "Email", "text": "demo@acme.test"}},
        {"input": {"element": "Password", "text": PASSWORD}},
        {"click": {"element": "Sign in"}},
    ]
}
SCENARIOS = [
    {
        "name": "login",
        "match": "[bench-login]",
        "turns": [LOGIN_STEP, {"done": {"status": "pass", "reason": "Signed in as demo@acme.test."}}],
    },
    {
        "name": "page",
        "match": "[bench-page]",
        "turns": [{"done": {"status": "pass", "reason": "The page shows Signed in as demo@acme.test."}}],
    },
]
EXPECT = "    expect: {text: [Signed in as demo@acme.test]}"


@contextmanager
def services(latency: float) -> Iterator[tuple[DemoSite, ScriptedLLM]]:
    with DemoSite(password=PASSWORD) as site, ScriptedLLM(SCENARIOS, latency=latency) as llm:
        yield site, llm


def each_logs_in(folder: Path) -> Path:
    """Every test signs in through the form, then checks its page."""
    lines = ["version: 1", "defaults: {max_steps: 6, timeout: 300}", "tests:"]
    for n, page in enumerate(PAGES, 1):
        task = f"[bench-login] Sign in as demo@acme.test with password {PASSWORD}, then check {page} greets them ({n})."
        lines += [f"  - name: page {n}", "    start: /app/login", f"    task: {json.dumps(task)}", EXPECT]
    return _write(folder / "each-logs-in.yml", lines)


def signed_in(folder: Path) -> Path:
    """One login test saves the state; every page test starts from it."""
    task = f"[bench-login] Sign in as demo@acme.test with password {PASSWORD}."
    lines = [
        "version: 1",
        "defaults: {max_steps: 6, timeout: 300, use_state: user}",
        "tests:",
        "  - name: log in",
        "    start: /app/login",
        f"    task: {json.dumps(task)}",
        "    save_state: user",
        "    use_state: null",
        EXPECT,
    ]
    for n, page in enumerate(PAGES, 1):
        lines += [
            f"  - name: page {n}",
            f"    start: {page}",
            f"    task: {json.dumps(f'[bench-page] Check that {page} greets the signed-in user ({n}).')}",
            EXPECT,
        ]
    return _write(folder / "use-state.yml", lines)


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def totals(m: Measure) -> tuple[int, int, float]:
    """(LLM calls, tokens, summed test time) from the run's own results.json."""
    usage = m.results["usage"]
    return usage["llm_calls"], usage["total_tokens"], sum(t["duration_s"] for t in m.results["tests"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--latency", type=float, default=1.0, help="seconds the scripted LLM waits before each answer")
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure; the fastest counts")
    parser.add_argument("--concurrency", type=int, default=2)
    args = parser.parse_args()
    print(
        f"preview-qa use_state bench: {TESTS} signed-in tests, scripted LLM latency {args.latency:g} s, concurrency "
        f"{args.concurrency}, best of {args.repeat}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}"
    )
    runs: dict[str, list[Measure]] = {"each test logs in": [], "one login + use_state": []}
    with tempfile.TemporaryDirectory(prefix="preview-qa-bench-") as tmp, services(args.latency) as (site, llm):
        work = Path(tmp)
        manifests = {"each test logs in": each_logs_in(work), "one login + use_state": signed_in(work)}
        for i in range(args.repeat):  # in turns, so that both see the same load on the machine
            for label, qa in manifests.items():
                runs[label].append(
                    preview_qa(llm, site, qa, work / f"{i}-{qa.stem}", "--no-cache", "--concurrency", str(args.concurrency))
                )
    figures = {label: (best(ms), totals(best(ms))) for label, ms in runs.items()}
    for label, (m, (calls, tokens, test_s)) in figures.items():
        print(
            f"{label:22} wall {m.seconds:5.1f} s   {calls:3d} LLM calls   {tokens:7d} tokens   summed test time {test_s:5.1f} s"
        )
    (each, (c1, t1, s1)), (used, (c2, t2, s2)) = figures.values()
    print(
        f"{'use_state saves':22} wall {each.seconds - used.seconds:5.1f} s   {c1 - c2:3d} LLM calls   {t1 - t2:7d} tokens "
        f"({1 - t2 / t1:.0%})   summed test time {s1 - s2:5.1f} s ({1 - s2 / s1:.0%})"
    )


if __name__ == "__main__":
    main()
