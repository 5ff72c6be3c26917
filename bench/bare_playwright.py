"""The anchor for bench/speed.py's replay: the bench's login tests as the leanest careful bare Playwright script does
them (one browser, a fresh context per test, N at a time, a screenshot after the login and one of the final page, and
the network idle before asserting, as preview-qa settles the page before its checks), nothing of ours.

--plain is bench/wait.py's anchor (issue #50), the script a team would write for the same test: a fresh 1280x800
context per test, fill the two fields, a screenshot, click, expect the URL and the greeting (Playwright's `expect`,
which waits for them), nothing more.

--evidence adds, still in plain Playwright, the evidence preview-qa keeps of a replayed test: a trace of each test
(screenshots and snapshots, as `--trace retain-on-failure` records every test), a screenshot after every step, and
every request of the context passed through a route (where preview-qa's firewall reads it). It is no goal's anchor:
it shows what that evidence costs without any code of ours."""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import tempfile
import time

from playwright.async_api import Page, async_playwright, expect


async def plain(base_url: str, page: Page, password: str) -> None:
    """The login as a team's own Playwright test does it."""
    await page.goto(f"{base_url}/login")
    await page.fill("input[name=email]", "demo@acme.test")
    await page.fill("input[type=password]", password)
    await page.screenshot()
    await page.click("button")
    await expect(page).to_have_url(re.compile("/dashboard"))
    await expect(page.get_by_text("Signed in as demo@acme.test")).to_be_visible()


async def main(
    base_url: str, tests: int, concurrency: int, password: str, chromium: str, evidence: bool, as_written: bool = False
) -> list[float]:
    """Run the tests; each one's wall time, from its context's opening to its closing."""
    durations: list[float] = []
    with tempfile.TemporaryDirectory(prefix="bare-playwright-") as folder:
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(executable_path=chromium)
            gate = asyncio.Semaphore(concurrency)

            async def one() -> None:
                async with gate:
                    clock = time.monotonic()
                    if as_written:
                        context = await browser.new_context(viewport={"width": 1280, "height": 800})
                        await plain(base_url, await context.new_page(), password)
                        await context.close()
                        durations.append(time.monotonic() - clock)
                        return
                    context = await browser.new_context()
                    if evidence:
                        await context.route("**/*", lambda route: route.continue_())
                        await context.tracing.start(screenshots=True, snapshots=True)
                    page = await context.new_page()
                    await page.goto(f"{base_url}/login")
                    await page.fill("input[name=email]", "demo@acme.test")
                    if evidence:
                        await page.screenshot()
                    await page.fill("input[type=password]", password)
                    if evidence:
                        await page.screenshot()
                    await page.click("button")
                    await page.wait_for_load_state("networkidle")
                    await page.screenshot()
                    await page.get_by_text("Signed in as demo@acme.test").wait_for()
                    await page.screenshot()
                    if evidence:
                        await context.tracing.stop(path=os.path.join(folder, f"trace-{id(page)}.zip"))
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
    parser.add_argument("--evidence", action="store_true", help="also keep preview-qa's evidence of a replayed test")
    parser.add_argument("--plain", action="store_true", help="the test as a team writes it (bench/wait.py's anchor)")
    args = parser.parse_args()
    durations = asyncio.run(
        main(args.base_url, args.tests, args.concurrency, args.password, args.chromium, args.evidence, args.plain)
    )
    if args.durations:
        with open(args.durations, "w", encoding="utf-8") as f:
            f.writelines(f"{d:.3f}\n" for d in durations)
