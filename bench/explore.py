"""The cost of `preview-qa explore` on the fixture pair (tests/site/explore_pair.py, main and a PR): pages a minute for
the sweeps alone (both sides), the repros' time and the whole job's, against the anchor of bare Playwright opening the
same pages on both sides in one browser; then the two changed pages' agent charters, with a scripted agent over HTTP
(tests/site/explore_pair.py's CHARTERS): LLM calls a charter and for its repros, and their time. Goal (issue #68): 30
pages of a small app on both sides in under 2 minutes. Prints figures; asserts nothing."""

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
from preview_qa.demo.scripted_llm import ScriptedLLM
from preview_qa.explore.explorer import Exploration, explore
from preview_qa.manifest import loader
from preview_qa.results import ExploreResult
from tests.site.explore_pair import CHARTER_ROUTES, CHARTERS, PairUrls, serve_pair


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
    with tempfile.TemporaryDirectory() as folder, serve_pair() as urls, ScriptedLLM(CHARTERS) as llm:
        out = Path(folder) / "out"
        charted, whole = charters(out, urls, llm.url, concurrency, chromium)
        took, run = seconds(out, "charter-preview"), json.loads((out / "charter-preview" / "results.json").read_text())
    n = max(1, len(charted.charters))
    own = sum(t["usage"]["llm_calls"] for t in run["tests"])
    print(f"charters: {len(charted.charters)} on the changed pages, {took:.1f} s; the whole exploration: {whole:.1f} s")
    print(f"LLM calls (the scripted agent's): {own / n:.1f} a charter, {(charted.usage.llm_calls - own) / n:.1f} its repros'")
    agents = [f for f in charted.findings if f.kind.value == "agent"]
    print(f"agent findings: {len(agents)} reported, {sum(1 for f in agents if f.confirmed)} confirmed")


def charters(out: Path, urls: PairUrls, llm_url: str, concurrency: int, chromium: str) -> tuple[ExploreResult, float]:
    """The exploration of the two changed pages, whose charters the scripted agent plays."""
    text = "version: 1\nroutes: " + json.dumps(CHARTER_ROUTES) + "\ntests: [{name: home, steps: [{open: /}]}]\n"
    manifest = loader.loads(text, "qa.yml")
    config = RunConfig(
        manifest=Path("qa.yml"),
        base_url=urls.pr,
        out=out,
        concurrency=concurrency,
        chromium=chromium,
        llm_base_url=llm_url,
        api_key="k",
        model="scripted",
    )
    job = Exploration(config, urls.main, 2, manifest=manifest, changed=["src/search/page.tsx", "src/product/page.tsx"])
    clock = time.monotonic()
    result = explore(job, {**os.environ, "PREVIEW_QA_NO_CACHE": "1"})
    return result, time.monotonic() - clock


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args()
    main(args.concurrency, args.chromium)
