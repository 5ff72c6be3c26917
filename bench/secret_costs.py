"""What keeping secrets costs: a screenshot with and without masking (real Chromium, the demo search page), and the
redactor's throughput on a browser-state-sized text. Prints figures; asserts nothing."""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from fixture_site import DemoSite
from playwright.async_api import async_playwright

from preview_qa.agent.guards.masking import Mask, screenshot
from preview_qa.secrets.redact import Redactor

SECRET = "Quokka Marmalade &=! 7351"


async def shots(chromium: str, rounds: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {"plain": [], "masked": []}
    with DemoSite() as site:
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
            page = await browser.new_page(viewport={"width": 1280, "height": 800})
            await page.goto(f"{site.url}/search?code={SECRET.replace(' ', '+').replace('&', '%26')}")
            mask = Mask(Redactor({"code": SECRET, "api-key": "an-api-key-123456"}))
            for _ in range(rounds):
                for kind, which in (("plain", Mask(Redactor({}))), ("masked", mask)):
                    start = time.perf_counter()
                    await screenshot(page, which)
                    times[kind].append(time.perf_counter() - start)
            await browser.close()
    return times


def redaction(rounds: int) -> float:
    redactor = Redactor({"code": SECRET, "pw": "s3cr3t-Pa55-word-4242", "api-key": "sk-live-0123456789abcdef"})
    state = (
        "[12]<input type=text name=code value=... />\n\tSearch customers\nTab 1A2B: http://127.0.0.1/search?code="
        "Wombat+Pancake+2946 - Search\n"
    ) * 150  # about 15 KB, a typical browser state
    start = time.perf_counter()
    for _ in range(rounds):
        redactor.text(state)
    return (time.perf_counter() - start) / rounds


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    times = asyncio.run(shots(args.chromium, args.rounds))
    for kind, values in times.items():
        print(
            f"screenshot {kind:6}: median {statistics.median(values) * 1000:6.1f} ms, "
            f"max {max(values) * 1000:6.1f} ms over {len(values)}"
        )
    print(f"redacting a 15 KB browser state for 3 secrets: {redaction(args.rounds) * 1000:.1f} ms")
