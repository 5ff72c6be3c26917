"""The sightings watcher (agent/page/sightings.py) in real Chromium: a toast shown 0.3 s on a page that never stops
changing (a spinner's class flips every 50 ms) is seen every time it shows, since a change brings the next look
forward. Before, a look due 0.5 s later (after a look that found nothing new) was kept, and a toast that came and went
before it was never seen: `appeared` failed, and worse, `not_appeared` passed on a page that showed the error."""

from __future__ import annotations

import asyncio

import pytest

from preview_qa.agent.page.sightings import Sightings
from preview_qa.config import find_chromium

pytestmark = pytest.mark.e2e

PAGE = """<!doctype html><title>Orders</title><main><h1>Orders</h1><p id=spin>Loading</p><div id=toasts></div></main>
<script>
setInterval(() => document.getElementById('spin').classList.toggle('on'), 50);
function toast(text) {
  const note = document.createElement('p');
  note.setAttribute('role', 'status');
  note.textContent = text;
  document.getElementById('toasts').append(note);
  setTimeout(() => note.remove(), 300);
}
</script>"""
TOASTS = [f"Order {n} saved" for n in range(1, 7)]


def test_every_toast_on_a_restless_page_is_seen() -> None:
    from playwright.async_api import Route, async_playwright

    async def main() -> Sightings:
        sightings = Sightings(lambda: 1, "http://shop.test")
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=find_chromium())
            context = await browser.new_context()

            async def serve(route: Route) -> None:
                await route.fulfill(content_type="text/html", body=PAGE)

            await context.route("http://shop.test/**", serve)
            page = await context.new_page()
            # As a test's session does (agent/session.py): attached on the context's first page, and installed before
            # it shows anything. Without the wait, at load 12, the first toast came and went before the watcher ran.
            sightings.attach(context)
            await sightings.installed()
            await page.goto("http://shop.test/orders", wait_until="load")
            for text in TOASTS:  # one after another: each shows 0.3 s, then the next one is shown
                await page.evaluate("text => toast(text)", text)
                await page.wait_for_function("() => !document.querySelector('#toasts p')")
            await sightings.look()
            await browser.close()
        return sightings

    shown = [line.text for line in asyncio.run(main()).lines]
    assert [text for text in TOASTS if text in shown] == TOASTS, shown
