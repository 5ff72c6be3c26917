"""The explore fixture pair (tests/site/explore_pair.py) behaves as it says, in real Chromium: every page of each side
is loaded once (one browser, one context a side) and what a sweep would see there is read by hand — uncaught errors,
console errors, same-origin responses and links that answer >= 400, images that did not load, axe-core's serious and
critical violations, and the PR's screenshot against main's. The PR's plants show on the PR only, main's bugs on both
sides, and nothing else anywhere; the two bugs only a user finds show when the page is used."""

from __future__ import annotations

import asyncio
import os
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import urlsplit
from xml.etree import ElementTree

import pytest

from preview_qa.agent.browsers.chromium import find_chromium
from preview_qa.agent.page.accessibility import violations_on
from preview_qa.manifest.expectations import Accessibility, Impact
from preview_qa.verdict.checks.visual import compare
from tests.site.explore_pair import (
    ADD_TO_CART,
    BLOG_IMAGE,
    CART_COUNT,
    CLEAN,
    HELP_ERROR,
    MAIN,
    ORDERS_API,
    PAGES,
    PR,
    PR_ONLY,
    PRODUCT_IMAGE,
    SEARCH_FOUND,
    SEARCH_NONE,
    SEARCH_QUERY,
    TEAM_ERROR,
    PairUrls,
    Side,
    sweep_finds,
)

if TYPE_CHECKING:
    from playwright.async_api import Browser, BrowserContext, ConsoleMessage, Response

pytestmark = pytest.mark.e2e

SERIOUS = (Impact.SERIOUS, Impact.CRITICAL)  # the impacts a sweep reports
MAX_DIFF = 0.001  # expect.visual's default share of pixels that may differ
LOAD_FAILED = "Failed to load resource"  # Chromium's own console line for each failed request (an http_error already)
_BROKEN_IMAGES = "() => [...document.images].filter(i => i.complete && !i.naturalWidth).map(i => i.getAttribute('src'))"
_LINKS = "() => [...document.querySelectorAll('a[href]')].map(a => a.href)"


@dataclass
class Seen:
    """What one load of one page showed."""

    page_errors: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)  # console.error's texts (Chromium's LOAD_FAILED apart)
    failed: list[tuple[int, str]] = field(default_factory=list)  # (status, path) of same-origin responses >= 400
    broken_images: list[str] = field(default_factory=list)  # their src
    broken_links: list[tuple[int, str]] = field(default_factory=list)  # (status, path) of same-origin links
    violations: list[str] = field(default_factory=list)  # axe-core rule ids, serious or critical
    shot: bytes = b""

    def console(self, message: ConsoleMessage) -> None:
        if message.type == "error" and not message.text.startswith(LOAD_FAILED):
            self.console_errors.append(message.text)

    def response(self, response: Response, base: str) -> None:
        if response.status >= 400 and response.url.startswith(base):
            self.failed.append((response.status, urlsplit(response.url).path))

    def kinds(self) -> set[str]:
        """The finding kinds a sweep raises on this page alone (all but visual)."""
        facts = {
            "page_error": self.page_errors,
            "console_error": self.console_errors,
            "http_error": self.failed,
            "broken_image": self.broken_images,
            "broken_link": self.broken_links,
            "accessibility": self.violations,
        }
        return {kind for kind, found in facts.items() if found}


@dataclass
class Swept:
    seen: dict[Side, dict[str, Seen]]
    sitemaps: dict[Side, list[str]]  # each side's /sitemap.xml <loc>s
    used: dict[Side, dict[str, str]]  # what each side's page showed when used: search results, cart count
    differ: dict[str, float] = field(default_factory=dict)  # each page's share of pixels the PR's shot differs in

    def finds(self, side: Side) -> dict[str, frozenset[str]]:
        """Each page's finding kinds on `side`, with visual on the PR's pages that look different from main's."""
        found = {path: set(seen.kinds()) for path, seen in self.seen[side].items()}
        for path, ratio in self.differ.items():
            if side == PR and ratio > MAX_DIFF:
                found[path].add("visual")
        return {path: frozenset(kinds) for path, kinds in found.items()}


async def _look(context: BrowserContext, base: str, path: str) -> Seen:
    seen = Seen()
    page = await context.new_page()
    page.on("pageerror", lambda error: seen.page_errors.append(str(error)))
    page.on("console", seen.console)
    page.on("response", lambda response: seen.response(response, base))
    document = await page.goto(base + path)
    assert document is not None and document.status == 200, f"{base}{path}"
    seen.broken_images = await page.evaluate(_BROKEN_IMAGES)
    for link in sorted({link for link in await page.evaluate(_LINKS) if link.startswith(base)}):
        status = (await context.request.get(link)).status
        if status >= 400:
            seen.broken_links.append((status, urlsplit(link).path))
    violations = await violations_on(page, Accessibility())
    seen.violations = [v.rule for v in violations if v.impact in SERIOUS]
    seen.shot = await page.screenshot()
    await page.close()
    return seen


async def _use(context: BrowserContext, base: str) -> dict[str, str]:
    """Search for SEARCH_QUERY and add the product to the cart once, as a user would; what each page then shows."""
    page = await context.new_page()
    await page.goto(base + "/search")
    await page.get_by_label("Search products").fill(SEARCH_QUERY)
    await page.get_by_role("button", name="Search").click()
    results = await page.locator("#results").inner_text()
    await page.goto(base + "/products/1")
    await page.get_by_role("button", name=ADD_TO_CART).click()
    count = await page.locator(f"#{CART_COUNT}").inner_text()
    await page.close()
    return {"/search": results, "/products/1": count}


async def _sweep(urls: PairUrls) -> Swept:
    from playwright.async_api import async_playwright

    swept = Swept({}, {}, {})

    async def side_of(browser: Browser, side: Side, base: str) -> None:
        context = await browser.new_context()
        swept.seen[side] = {path: await _look(context, base, path) for path in PAGES}
        swept.used[side] = await _use(context, base)
        sitemap = ElementTree.fromstring(await (await context.request.get(base + "/sitemap.xml")).body())
        swept.sitemaps[side] = [loc.text or "" for loc in sitemap.findall(".//{*}loc")]
        await context.close()

    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=find_chromium(None, os.environ))
        try:  # both sides at once, each in its own context
            await asyncio.gather(side_of(browser, MAIN, urls.main), side_of(browser, PR, urls.pr))
        finally:
            await browser.close()
    swept.differ = {path: compare(swept.seen[MAIN][path].shot, swept.seen[PR][path].shot).diff_ratio for path in PAGES}
    return swept


@pytest.fixture(scope="module")
def swept(explore_pair: PairUrls) -> Swept:
    return asyncio.run(_sweep(explore_pair))


@pytest.mark.parametrize("side", [MAIN, PR])
def test_each_page_shows_what_the_fixture_says_and_nothing_else(swept: Swept, side: Side) -> None:
    assert swept.finds(side) == sweep_finds(side)


@pytest.mark.parametrize(("kind", "path"), PR_ONLY.items())
def test_each_plant_of_the_pr_shows_on_the_pr_only(swept: Swept, kind: str, path: str) -> None:
    assert kind in swept.finds(PR)[path]
    assert kind not in swept.finds(MAIN)[path]


def test_the_plants_are_what_they_say(swept: Swept) -> None:
    pr = swept.seen[PR]
    assert [e for e in pr["/cart"].page_errors if "TypeError" in e or "Cannot read properties" in e]
    assert pr["/orders"].failed == [(500, ORDERS_API)]
    assert pr["/about"].broken_links == [(404, "/team-members")]
    assert pr["/products"].broken_images == [PRODUCT_IMAGE] and pr["/products"].failed == [(404, PRODUCT_IMAGE)]
    assert pr["/contact"].violations == ["label"]
    assert pr["/help"].console_errors == [HELP_ERROR]
    assert swept.differ["/pricing"] > 0.05  # a big block, not a hairline


def test_mains_bugs_show_on_both_sides_with_ids_that_differ(swept: Swept) -> None:
    for side in (MAIN, PR):
        assert swept.seen[side]["/blog"].broken_images == [BLOG_IMAGE]
        assert swept.seen[side]["/blog"].failed == [(404, BLOG_IMAGE)]
    pattern = re.escape(TEAM_ERROR).replace(re.escape("{id}"), "[0-9a-f-]{36}").replace(re.escape("{ms}"), "[0-9]+")
    texts = [swept.seen[side]["/team"].console_errors for side in (MAIN, PR)]
    assert all(len(said) == 1 and re.fullmatch(pattern, said[0]) for said in texts), texts
    assert texts[0] != texts[1]  # the same error, told with other numbers: the comparison must fold them


def test_the_clean_pages_look_the_same_on_both_sides(swept: Swept) -> None:
    assert {path: swept.differ[path] for path in CLEAN} == dict.fromkeys(CLEAN, 0.0)


def test_the_pr_breaks_search_and_the_cart_count_for_a_user_only(swept: Swept) -> None:
    assert swept.used[MAIN] == {"/search": SEARCH_FOUND, "/products/1": "Cart: 1"}
    assert swept.used[PR] == {"/search": SEARCH_NONE, "/products/1": "Cart: 0"}


def test_each_side_lists_every_page_in_its_sitemap(swept: Swept, explore_pair: PairUrls) -> None:
    assert swept.sitemaps[MAIN] == [explore_pair.main + path for path in PAGES]
    assert swept.sitemaps[PR] == [explore_pair.pr + path for path in PAGES]
