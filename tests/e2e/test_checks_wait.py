"""The expect: checks wait like Playwright's own expect, on a real page in real Chromium: checked the moment after a
click (no agent in between, so no load on the machine can hide a check that looks only once). Each bound on how long
a check took is far from what it tells apart (a wait of 2.5 s against a budget of 30 s), so a busy machine cannot
break it; lower bounds hold however slow the machine is (a page's timer never fires early)."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from preview_qa.agent.browsers.chromium import find_chromium
from preview_qa.agent.page.checks import check_page
from preview_qa.manifest.models import Expectations
from preview_qa.manifest.page_state import AttributeCheck, CssCheck, ElementCheck
from preview_qa.results import ExpectationOutcome
from tests.site import DemoSite

pytestmark = pytest.mark.e2e
WIDE = 30.0  # a budget no check here should use up: stopping well before it is what these tests check


def checked(
    site: DemoSite, path: str, then: Callable[[Any], Awaitable[None]], expect: Expectations, wait_s: float | None = None
) -> tuple[list[ExpectationOutcome], float]:
    """Open `path`, do `then(page)`, and check at once: the outcomes and how long the checks took."""
    from playwright.async_api import async_playwright

    async def main() -> tuple[list[ExpectationOutcome], float]:
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=find_chromium(None, os.environ))
            page = await browser.new_page()
            await page.goto(site.url + path)
            await then(page)
            clock = time.monotonic()
            outcomes = await check_page(expect, page, wait_s)
            took = time.monotonic() - clock
            await browser.close()
            return outcomes, took

    return asyncio.run(main())


async def click(page: Any, name: str) -> None:
    await page.get_by_role("button", name=name).click()


def test_text_waits_for_a_confirmation_that_appears_2_5_s_after_the_click(site: DemoSite) -> None:
    expect = Expectations(text=["Order confirmed"], timeout=WIDE)
    [outcome], took = checked(site, "/order", lambda page: click(page, "Place order"), expect)
    assert outcome.ok, outcome
    assert 2 < took < WIDE / 2  # it waited for the confirmation, and no longer
    assert 2 < outcome.waited_s < outcome.timeout_s == WIDE  # the wait it reports is the one it had, not its budget


def test_not_text_waits_for_a_notice_to_go_away(site: DemoSite) -> None:
    expect = Expectations(not_text=["Saving"], timeout=WIDE)
    [outcome], took = checked(site, "/save", lambda page: click(page, "Save profile"), expect)
    assert outcome.ok and outcome.found == "it is not visible", outcome
    assert 0.5 < took < WIDE / 2


def test_a_wait_that_ends_in_vain_reports_the_page_as_it_was_then(site: DemoSite) -> None:
    async def pending_later(page: Any) -> None:
        await click(page, "Place order")
        await page.evaluate("setTimeout(() => { document.title = 'Payment pending - Acme'; }, 500)")

    [title, text], took = checked(
        site, "/order?ms=60000", pending_later, Expectations(title="Confirmed", text=["Order confirmed"], timeout=6)
    )
    assert not title.ok and not text.ok and title.timeout_s == text.timeout_s == 6
    assert title.found.startswith("'Payment pending - Acme' (on http://")  # not the title it had when the wait began
    assert text.found != "it is visible"
    assert 6 <= took < 12  # both waits side by side: one after the other would take 12 s


def test_url_and_title_wait_too_and_every_check_waits_at_once(site: DemoSite) -> None:
    async def change_later(page: Any) -> None:
        await page.evaluate(
            "setTimeout(() => { history.pushState({}, '', '/order/done'); document.title = 'Order confirmed - Acme'; }, 1500)"
        )
        await click(page, "Place order")

    outcomes, took = checked(
        site,
        "/order",
        change_later,
        Expectations(url="/order/done", title="order CONFIRMED", text=["Order confirmed"], not_text=["Processing"], timeout=WIDE),
    )
    assert [(o.check, o.ok) for o in outcomes] == [("url", True), ("title", True), ("text", True), ("not_text", True)]
    assert took < WIDE / 2  # each ends when its condition holds, none waits out its budget


def test_a_check_with_no_time_left_still_looks_once(site: DemoSite) -> None:
    expect = Expectations(text=["Acme Anvil", "Free shipping"], timeout=WIDE)
    [held, missing], took = checked(site, "/product", lambda page: asyncio.sleep(0), expect, wait_s=0)
    assert held.ok and not missing.ok and took < WIDE / 2  # no wait for the missing text: its budget was 0, not 30 s


def test_a_state_check_waits_through_a_moment_of_two_elements(site: DemoSite) -> None:
    """A row replaced by its new version stands beside it a moment: each state check waits for the one element in its
    state, where Playwright's strict mode would fail at the first look."""

    async def two_then_one(page: Any) -> None:
        await page.evaluate(
            """() => {
              for (const n of [1, 2]) document.body.insertAdjacentHTML('beforeend',
                `<button class=twin data-state=old style="color: rgb(0, 0, 255)">Twin ${n}</button>`);
              setTimeout(() => {
                const [old, fresh] = document.querySelectorAll('.twin');
                old.remove();
                fresh.dataset.state = 'new';
                fresh.style.color = 'rgb(255, 0, 0)';
              }, 1500);
            }"""
        )

    expect = Expectations(
        element=[ElementCheck(role="button", name="Twin")],
        attribute=[AttributeCheck(selector=".twin", name="data-state", value="new")],
        css=[CssCheck(selector=".twin", property="color", value="rgb(255, 0, 0)")],
        timeout=WIDE,
    )
    outcomes, took = checked(site, "/product", two_then_one, expect)
    assert [(o.check, o.ok, o.found) for o in outcomes] == [
        ("element", True, "it is visible"),
        ("attribute", True, "it is 'new'"),
        ("css", True, "it is 'rgb(255, 0, 0)'"),
    ], outcomes
    assert all(o.waited_s >= 1 for o in outcomes) and took < WIDE / 2  # it waited for the one, and no longer
