"""What a failing page check says it found, on a real page in Chromium: the nearest line, not the page's header; and
text counted as a person sees it (agent/page/shown.js), with why no one can see what is hidden."""

from __future__ import annotations

import asyncio
import os

import pytest

from preview_qa.agent.browsers.chromium import find_chromium
from preview_qa.agent.page.checks import check_page
from preview_qa.manifest.models import Expectations
from preview_qa.results import ExpectationOutcome
from tests.site import DemoSite

pytestmark = pytest.mark.e2e


def checks_on(url: str, expect: Expectations, html: str | None = None) -> dict[str, ExpectationOutcome]:
    from playwright.async_api import async_playwright

    async def main() -> list[ExpectationOutcome]:
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=find_chromium(None, os.environ))
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
    hidden = found["text:visible text 'Payment confirmed'"]
    assert hidden.found == "it is in the page, but no one can see it: display: none (on <p>)"
    assert found["text:visible text 'Refund issued to your card'"].found == (
        "no visible line resembles it (the page shows 2 line(s) of text: 'Orders', 'Shipping soon')"
    )


SEEN = """<h1>Checkout</h1>
<p style="opacity:0">Hidden by opacity</p>
<div style="opacity:0.05"><p>Hidden by the opacity of its parent</p></div>
<span style="position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0,0,0,0)">Hidden by clip</span>
<span style="position:absolute;width:1px;height:1px;overflow:hidden">Hidden in one pixel</span>
<div style="width:300px;height:0;overflow:hidden"><p>Hidden in no height</p></div>
<p style="clip-path:inset(50%)">Hidden by clip-path</p>
<p style="position:absolute;left:-9999px">Hidden off the left</p>
<p style="text-indent:-9999px">Hidden by its indent</p>
<p style="color:transparent">Hidden as transparent</p>
<p style="font-size:0">Hidden at font-size zero</p>
<p style="background:linear-gradient(red,blue);-webkit-background-clip:text;color:transparent">Shown as gradient text</p>
<div style="height:3000px"></div><p>Shown below the fold</p>
<textarea readonly>Shown in a textarea</textarea><input value="Shown in an input"><input placeholder="Shown as a placeholder">
<input type=password value="Hidden password"><select><option>One</option><option selected>Shown as chosen</option></select>
<div id=host></div>
<script>document.getElementById("host").attachShadow({mode: "open"}).innerHTML = "<p>Shown in a shadow root</p>";</script>"""
HIDDEN = {
    "Hidden by opacity": "opacity 0 (on <p>)",
    "Hidden by the opacity of its parent": "opacity 0.05 (on <div>)",
    "Hidden by clip": "clipped to nothing (clip: rect(0px, 0px, 0px, 0px)) (on <span>)",
    "Hidden in one pixel": "clipped to nothing (inside a 1×1 px <span> with overflow hidden)",
    "Hidden in no height": "clipped to nothing (inside a 300×0 px <div> with overflow hidden)",
    "Hidden by clip-path": "clipped to nothing (clip-path: inset(50%)) (on <p>)",
    "Hidden off the left": "placed outside the page, 9999 px left of it",
    "Hidden by its indent": "placed outside the page, 9991 px left of it",
    "Hidden as transparent": "transparent text (color: transparent)",
    "Hidden at font-size zero": "font-size 0",
    "Hidden password": "it is the value of a password field",
}


def test_text_counts_where_a_person_could_see_it_and_a_field_shows_its_value(site: DemoSite) -> None:
    shown = ["as gradient text", "below the fold", "in a textarea", "in an input", "as a placeholder", "as chosen"]
    shown.append("in a shadow root")
    expect = Expectations(text=[*HIDDEN, *(f"Shown {s}" for s in shown)], timeout=0.2)
    found = {key.split("'")[1]: o for key, o in checks_on(f"{site.url}/", expect, SEEN).items()}
    assert {text: o.found for text, o in found.items() if text in HIDDEN} == {
        text: f"it is in the page, but no one can see it: {why}" for text, why in HIDDEN.items()
    }
    assert {text: o.found for text, o in found.items() if text not in HIDDEN} == {f"Shown {s}": "it is visible" for s in shown}
    unwanted = checks_on(f"{site.url}/", Expectations(not_text=["Shown in a textarea", "Hidden by opacity"], timeout=0.2), SEEN)
    assert [o.ok for o in unwanted.values()] == [False, True]
    where = unwanted["not_text:no visible text 'Shown in a textarea'"].found
    assert where == "it is visible in 'Shown in a textarea' (a <textarea> element)"


PARTLY = """<body style="margin:0"><p style="margin:20px 0 0 0;font-size:20px">Order confirmed, and a sentence that goes on
across the page</p><div style="position:fixed;top:0;left:0;width:220px;height:80px;background:#0a0">Saved</div>
<div style="position:relative;margin-top:40px"><svg width="600" height="200"><rect width="600" height="200" fill="#123"/>
</svg><h2 style="position:absolute;top:20px;left:20px;margin:0;color:#fff">Summer sale</h2></div>
<p style="color:#fafafa">Pale as the page</p></body>"""


def test_the_words_a_check_names_must_be_on_top_and_readable_not_only_their_line(site: DemoSite) -> None:
    expect = Expectations(text=["Order confirmed", "goes on across the page", "Summer sale", "Pale as the page"], timeout=0.2)
    found = {key.split("'")[1]: o.found for key, o in checks_on(f"{site.url}/", expect, PARTLY).items()}
    assert found == {
        "Order confirmed": "it is in the page, but no one can see it: covered by a <div> ('Saved')",
        "goes on across the page": "it is visible",
        "Summer sale": "it is visible",  # white on the dark picture behind it, not on the white page
        "Pale as the page": "it is in the page, but no one can see it: unreadable, white on white (contrast 1.04:1)",
    }
