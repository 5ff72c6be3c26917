"""The sightings watcher (agent/page/sightings.py) in real Chromium: a toast shown for 0.1 s of painted frames on a page
that never stops changing (a spinner's class flips every 50 ms) is seen every time it shows, however busy the machine.
A change is read in the first frames that paint it. Before, a look came on a timer 0.15 s (or a costly first read's
spacing) after the change; on a busy CI machine the first two of six 0.3 s toasts were missed: `appeared` failed, and
worse, `not_appeared` passed on a page that showed the error. The page moves only when the test tells it to."""

from __future__ import annotations

import asyncio
import os

import pytest

from preview_qa.agent.browsers.chromium import find_chromium
from preview_qa.agent.page.sightings import Sightings

pytestmark = pytest.mark.e2e

PAGE = """<!doctype html><title>Orders</title><main><h1>Orders</h1><p id=spin>Loading</p><div id=toasts></div></main>
<script>
setInterval(() => document.getElementById('spin').classList.toggle('on'), 50);
function toast(text) {
  const note = document.createElement('p');
  note.setAttribute('role', 'status');
  note.textContent = text;
  document.getElementById('toasts').append(note);
}
// resolves once frames spanning `ms` have been painted since it was called
const painted = (ms) => new Promise((done) => {
  const t0 = performance.now();
  const tick = () => performance.now() - t0 >= ms ? done() : requestAnimationFrame(tick);
  requestAnimationFrame(tick);
});
</script>"""
TOASTS = [f"Order {n} saved" for n in range(1, 7)]
SHOWN_MS = 100  # each toast, in painted frames: shorter than the 0.15 s a change's look used to wait


def test_every_toast_on_a_restless_page_is_seen() -> None:
    from playwright.async_api import Route, async_playwright

    async def main() -> Sightings:
        sightings = Sightings(lambda: 1, "http://shop.test")
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=find_chromium(None, os.environ))
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
            for text in TOASTS:  # one after another: each shows for 0.1 s of frames, then the next one is shown
                await page.evaluate("text => toast(text)", text)
                await page.evaluate(f"painted({SHOWN_MS})")
                await page.evaluate("document.querySelector('#toasts p').remove()")
            await sightings.look()
            await browser.close()
        return sightings

    shown = [line.text for line in asyncio.run(main()).lines]
    assert [text for text in TOASTS if text in shown] == TOASTS, shown
