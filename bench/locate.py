"""Prints what finding a recorded element and counting its exported locator cost (issue #35): on the twins page
(/twins/: a unique link, a footer link scoped by its landmark, a card's button by its test id, a copy button by its
place) and on a docs-sized page of 300 links, where the replay used to read every link's accessible name."""

from __future__ import annotations

import asyncio
import os
import statistics
import time
from typing import Any

from fixture_site import DemoSite

from preview_qa.agent.browsers.chromium import find_chromium
from preview_qa.agent.browsers.launch import BROWSER_ARGS
from preview_qa.agent.replay.locate import LiveMatch, find_live, locator_facts, look

ROUNDS = 15
TWINS = {
    "unique: the navbar's Docs link": ("A", "html/body/header/nav/a[2]", "Docs"),
    "the footer's Tutorial (a landmark)": ("A", "html/body/footer/a", "Tutorial"),
    "the Pro card's Choose (a test id)": ("BUTTON", "html/body/main/article[2]/button", "Choose"),
    "the second Copy (its place)": ("BUTTON", "html/body/main/ul/li[2]/button", "Copy"),
}
LINKS = "".join(f'<li><a href="/p{i}">Page {i}</a></li>' for i in range(300))
TUTORIAL = "<a href=/docs>Tutorial</a>"
DOCS = f"<header><nav>{TUTORIAL}</nav></header><main><ul>{LINKS}</ul></main><footer>{TUTORIAL}</footer>"


async def figures(page: Any, label: str, tag: str, xpath: str, name: str) -> None:
    recorded = {"node_name": tag, "attributes": {"href": "/docs"} if tag == "A" else {}, "x_path": xpath, "ax_name": name}
    finding, counting = [], []
    for _ in range(ROUNDS):
        start = time.perf_counter()
        match = await find_live(page, recorded)
        finding.append(time.perf_counter() - start)
        assert isinstance(match, LiveMatch), match
        start = time.perf_counter()
        facts = await locator_facts(match.element, recorded)
        counting.append(time.perf_counter() - start)
        await match.dispose()
    within = facts["within"]["value"] if facts["within"] else f"nth({facts['nth']})" if facts["matches"] > 1 else "-"
    print(
        f"{label:42} finding it {1000 * statistics.median(finding):6.1f} ms   counting its locator "
        f"{1000 * statistics.median(counting):6.1f} ms   ({facts['matches']} match(es), scoped by {within})"
    )


async def main() -> None:
    from playwright.async_api import async_playwright

    with DemoSite() as site:
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=find_chromium(None, os.environ), args=BROWSER_ARGS)
            page = await browser.new_page()
            await page.goto(f"{site.url}/twins/")
            for label, (tag, xpath, name) in TWINS.items():
                await figures(page, label, tag, xpath, name)
            await page.set_content(DOCS)
            await figures(page, "300 links: the footer's Tutorial", "A", "html/body/footer/a", "Tutorial")
            start = time.perf_counter()
            await look(page, {"node_name": "A", "x_path": "html/body/footer/a", "ax_name": "Tutorial"}, None)
            print(
                f"300 links, every link's name read, as the replay found an element before: {time.perf_counter() - start:.1f} s"
            )
            await browser.close()
    print(f"(medians of {ROUNDS}; the agent's step pays both before each action on an element, a replay the second more)")


if __name__ == "__main__":
    asyncio.run(main())
