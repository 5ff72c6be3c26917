"""The anchor for bench/speed.py's replay: the bench's login tests as the leanest careful bare Playwright script does
them (one browser, a fresh context per test, N at a time, a screenshot after the login and one of the final page, and
the network idle before asserting, as preview-qa settles the page before its checks), nothing of ours."""

from __future__ import annotations

import argparse
import asyncio
import time

from playwright.async_api import async_playwright


async def main(base_url: str, tests: int, concurrency: int, password: str, chromium: str) -> list[float]:
    """Run the tests; each one's wall time, from its context's opening to its closing."""
    durations: list[float] = []
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=chromium)
        gate = asyncio.Semaphore(concurrency)

        async def one() -> None:
            async with gate:
                clock = time.monotonic()
                context = await browser.new_context()
                page = await context.new_page()
                await page.goto(f"{base_url}/login")
                await page.fill("input[name=email]", "demo@acme.test")
                await page.fill("input[type=password]", password)
                await page.click("button")
                await page.wait_for_load_state("networkidle")
                await page.screenshot()
                await page.get_by_text("Signed in as demo@acme.test").wait_for()
                await page.screenshot()
                await context.close()
                durations.append(time.monotonic() - clock)

        await asyncio.gather(*(one() for _ in range(tests)))
        await browser.close()
    return durations


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--tests", type=int, default=8)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--password", required=True)
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--durations", help="a file to write each test's wall time to, one a line")
    args = parser.parse_args()
    durations = asyncio.run(main(args.base_url, args.tests, args.concurrency, args.password, args.chromium))
    if args.durations:
        with open(args.durations, "w", encoding="utf-8") as f:
            f.writelines(f"{d:.3f}\n" for d in durations)
