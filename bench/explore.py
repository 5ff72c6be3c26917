"""The cost of `preview-qa explore` on the fixture pair (tests/site/explore_pair.py, main and a PR): pages a minute for
the sweeps alone (both sides), the repros' time, the whole job's, and LLM calls (none: no charter runs yet), against
the anchor of bare Playwright opening the same pages on both sides in one browser. Goal (issue #68): 30 pages of a
small app on both sides in under 2 minutes. Prints figures; asserts nothing."""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from playwright.sync_api import sync_playwright

from preview_qa.config import RunConfig
from preview_qa.explore.explorer import Exploration, explore
from tests.site.explore_pair import serve_pair


def bare(urls: list[str], chromium: str) -> float:
    """Bare Playwright: each page opened to its load event, one after another, in one browser."""
    clock = time.monotonic()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium)
        page = browser.new_page()
        for url in urls:
            page.goto(url)
        browser.close()
    return time.monotonic() - clock


def seconds(out: Path, run: str) -> float:
    return float(json.loads((out / run / "results.json").read_text(encoding="utf-8"))["duration_s"])


def main(concurrency: int, chromium: str) -> None:
    with tempfile.TemporaryDirectory() as folder, serve_pair() as urls:
        out = Path(folder) / "out"
        config = RunConfig(manifest=Path("explore.yml"), base_url=urls.pr, out=out, concurrency=concurrency, chromium=chromium)
        clock = time.monotonic()
        result = explore(Exploration(config, urls.main), {**os.environ, "PREVIEW_QA_NO_CACHE": "1"})
        whole = time.monotonic() - clock
        sweeps = seconds(out, "sweep-preview") + seconds(out, "sweep-baseline")
        repros = seconds(out, "repro-preview") + seconds(out, "repro-baseline")
        anchor = bare([base + page for base in (urls.pr, urls.main) for page in result.pages], chromium)
    pages = len(result.pages)
    print(f"pages: {pages} a side; findings: {len(result.findings)} ({len(result.breaks)} confirmed new); LLM calls: 0")
    print(f"sweeps, both sides: {sweeps:.1f} s = {2 * pages / sweeps * 60:.0f} pages a minute (concurrency {concurrency})")
    print(f"repros, both sides: {repros:.1f} s; the whole exploration: {whole:.1f} s")
    print(f"anchor, bare Playwright opening the same {2 * pages} pages in one browser: {anchor:.1f} s")
    print(f"30 pages a side at the sweeps' pace: {60 / (2 * pages / sweeps * 60) * 60:.0f} s (goal: under 120 s)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args()
    main(args.concurrency, args.chromium)
