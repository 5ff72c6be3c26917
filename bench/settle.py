"""The extra time settling the final page adds to a test whose page is already quiet (goal: under 0.6 s): the settle
of agent/page/settle.py on a fixture page, right after its load (the worst case: the quiet window still runs) and a
second later (as after an agent's last LLM call). Prints figures; asserts nothing."""

from __future__ import annotations

import argparse
import asyncio
import statistics

from playwright.async_api import async_playwright

from preview_qa.agent.page.settle import PageSettler
from preview_qa.demo.site import DemoSite


async def main(chromium: str, repeat: int) -> None:
    with DemoSite() as site:
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=chromium, args=["--disable-dev-shm-usage"])
            figures: dict[str, list[float]] = {"right after the load event": [], "1 s after the load event": []}
            for _ in range(repeat):
                for label, pause in (("right after the load event", 0.0), ("1 s after the load event", 1.0)):
                    context = await browser.new_context()
                    settler = PageSettler()
                    settler.attach(context)
                    page = await context.new_page()
                    await page.goto(f"{site.url}/moving/left", wait_until="load")
                    await asyncio.sleep(pause)
                    settled = await settler.settle(page, 5.0)
                    figures[label].append(settled.waited_s)
                    await context.close()
            await browser.close()
    for label, seconds in figures.items():
        print(
            f"settle on a quiet page, {label}: median {statistics.median(seconds):.3f} s, "
            f"max {max(seconds):.3f} s over {len(seconds)} runs (goal: under 0.6 s)"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    asyncio.run(main(args.chromium, args.repeat))
