"""What a failing page check says it found, on a real page in Chromium: the nearest line, not the page's header."""

from __future__ import annotations

import asyncio

import pytest

from preview_qa.agent.page.checks import check_page
from preview_qa.config import find_chromium
from preview_qa.manifest.models import Expectations
from preview_qa.results import ExpectationOutcome
from tests.site import DemoSite

pytestmark = pytest.mark.e2e


def checks_on(url: str, expect: Expectations, html: str | None = None) -> dict[str, ExpectationOutcome]:
    from playwright.async_api import async_playwright

    async def main() -> list[ExpectationOutcome]:
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=find_chromium())
            page = await browser.new_page()
            await page.goto(url)
            if html is not None:
                await page.set_content(html)
            try:
                return await check_page(expect, page)
            finally:
                await browser.close()

    return {f"{o.check}:{o.expected}": o for o in asyncio.run(main())}


def test_a_missing_text_names_the_nearest_line_at_the_bottom_of_a_long_page(site: DemoSite) -> None:
    found = checks_on(f"{site.url}/cart", Expectations(text=["Cart total: 2 item(s)", "Your cart"]))
    missing = found["text:visible text 'Cart total: 2 item(s)'"]
    assert not missing.ok
    assert missing.found == (
        "'Cart total: 1 item(s)' (the closest visible line, after 'Acme Anvil: $19.99' and before 'Checkout')"
    )
    assert found["text:visible text 'Your cart'"].ok


def test_an_unwanted_text_says_where_it_is_and_url_and_title_say_what_was_there(site: DemoSite) -> None:
    found = checks_on(f"{site.url}/cart", Expectations(not_text=["Widget model 7:"], url="/checkout", title="Checkout"))
    unwanted = found["not_text:no visible text 'Widget model 7:'"]
    assert not unwanted.ok and unwanted.found == "it is visible in 'Widget model 7: $7.99' (a <li> element)"
    assert found["url:URL containing '/checkout'"].found == f"'{site.url}/cart' (titled 'Your cart - Acme')"
    assert found["title:title containing 'Checkout'"].found == f"'Your cart - Acme' (on {site.url}/cart)"


def test_a_hidden_text_is_called_hidden_and_nothing_alike_is_not_dressed_up_as_a_match(site: DemoSite) -> None:
    html = "<h1>Orders</h1><p hidden>Payment confirmed</p><p>Shipping soon</p>"
    found = checks_on(f"{site.url}/", Expectations(text=["Payment confirmed", "Refund issued to your card"]), html)
    assert found["text:visible text 'Payment confirmed'"].found == "it is on the page but hidden"
    assert found["text:visible text 'Refund issued to your card'"].found == (
        "no visible line resembles it (the page shows 2 line(s) of text)"
    )
