"""Prints what the evidence of issue #15 costs: a step's settle wait (idle page, a link, a slow sign-in) and the
nearest-line search on long pages."""

from __future__ import annotations

import asyncio
import os
import statistics
import time

from fixture_site import DemoSite

from preview_qa.agent.adapter.step_watcher import StepWatcher
from preview_qa.agent.browsers.chromium import find_chromium
from preview_qa.agent.page.nearest import nearest_line
from preview_qa.agent.page.settle import PageSettler

ROUNDS = 10


async def settle_figures(site: DemoSite) -> None:
    from playwright.async_api import async_playwright

    async def nothing() -> bytes | None:
        return None

    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=find_chromium(None, os.environ))
        context = await browser.new_context()
        settler = PageSettler()
        settler.attach(context)
        page = await context.new_page()
        watcher = StepWatcher(shoot=nothing, settler=settler)
        cases = {"idle page": None, "after clicking a link": "Log in", "after a sign-in the server takes 3 s for": "Sign in"}
        for label, click in cases.items():
            times = []
            for _ in range(ROUNDS if click != "Sign in" else 2):
                await page.goto(f"{site.url}/signin" if click == "Sign in" else f"{site.url}/")
                settler.acted()  # as the agent's step tells it before its action
                if click == "Sign in":
                    await page.fill("#email", "demo@acme.test")
                    await page.fill("#password", site.password)
                    await page.get_by_role("button", name="Sign in").click(no_wait_after=True)
                elif click:
                    await page.get_by_role("link", name=click).click(no_wait_after=True)
                else:  # as after an agent's step that changed nothing: the page has been quiet for a while
                    await page.wait_for_load_state("networkidle")
                start = time.perf_counter()
                await watcher.settle(page)
                times.append(time.perf_counter() - start)
            print(
                f"settle, {label}: median {statistics.median(times) * 1000:.0f} ms over {len(times)} runs "
                f"(ends on {page.url.removeprefix(site.url)})"
            )
        await browser.close()


def nearest_figures() -> None:
    for count in (100, 5000):
        lines = [f"Widget model {n}: ${n}.99 in stock, ships in {n % 5 + 1} days" for n in range(count)]
        lines.append("Cart total: 1 item(s)")
        start = time.perf_counter()
        for _ in range(ROUNDS):
            found = nearest_line("Cart total: 2 item(s)", lines)
        took = (time.perf_counter() - start) / ROUNDS
        print(f"nearest line among {count + 1} lines: {took * 1000:.1f} ms -> {found.line if found else None!r}")


if __name__ == "__main__":
    with DemoSite() as demo:
        asyncio.run(settle_figures(demo))
    nearest_figures()
