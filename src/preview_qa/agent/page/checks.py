"""Deterministic expectations checked by code on the live final page, through Playwright."""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any

from preview_qa.agent.page.accessibility import axe_version, violations_on
from preview_qa.agent.page.nearest import found_instead_of_text, found_title, found_url, frame_name, where_text_is
from preview_qa.agent.page.state import check_attribute, check_css, check_element
from preview_qa.manifest.models import Expectations
from preview_qa.results import ExpectationOutcome, clip
from preview_qa.verdict.accessibility import accessibility_outcome
from preview_qa.verdict.data_checks import SHOWN

if TYPE_CHECKING:
    from playwright.async_api import Frame, Locator, Page

POLL_S = 0.1  # between two looks at every frame, as Playwright's own expect retries


async def check_page(expect: Expectations, page: Page, wait_s: float | None = None) -> list[ExpectationOutcome]:
    """Evaluate url, title, text, not_text and the state checks (element, attribute, css) on the live page, then
    accessibility (axe-core, no wait). Like
    Playwright's own `expect`, each check waits for its condition to hold (not_text: for the text to be gone), all at
    once, up to `wait_s` seconds (expect.timeout unless given); what each one reports found is the page as it was when
    its wait ended, and waited_s how long that wait really was."""
    wait = expect.timeout if wait_s is None else wait_s
    checks = []
    if expect.url is not None:
        checks.append(_url(page, expect.url, wait))
    if expect.title is not None:
        checks.append(_title(page, expect.title, wait))
    checks += [_text(page, text, wait) for text in expect.text]
    checks += [_not_text(page, text, wait) for text in expect.not_text]
    checks += [check_element(page, element, wait) for element in expect.element]
    checks += [check_attribute(page, attribute, wait) for attribute in expect.attribute]
    checks += [check_css(page, css, wait) for css in expect.css]
    outcomes = [o.model_copy(update={"timeout_s": round(wait, 2)}) for o in await asyncio.gather(*checks)]
    if expect.accessibility is not None:  # after the waits: on the page the other checks saw settle
        violations = await violations_on(page, expect.accessibility)
        outcomes.append(accessibility_outcome(expect.accessibility, violations, axe_version()))
    return outcomes


async def _url(page: Page, url: str, wait: float) -> ExpectationOutcome:
    ok, waited = await _holds(_assert_that(page).to_have_url(re.compile(re.escape(url)), timeout=_ms(wait)))
    return ExpectationOutcome(
        check="url", expected=f"URL containing {url!r}", found=page.url if ok else await found_url(page), ok=ok, waited_s=waited
    )


async def _title(page: Page, wanted: str, wait: float) -> ExpectationOutcome:
    ok, waited = await _holds(_assert_that(page).to_have_title(re.compile(re.escape(wanted), re.IGNORECASE), timeout=_ms(wait)))
    found = repr(clip(await page.title(), SHOWN)) if ok else await found_title(page)
    return ExpectationOutcome(check="title", expected=f"title containing {wanted!r}", found=found, ok=ok, waited_s=waited)


async def _text(page: Page, text: str, wait: float) -> ExpectationOutcome:
    frame, waited = await _wait_for_text(page, text, wait, shown=True)
    found = f"it is visible{frame_name(frame)}" if frame is not None else await found_instead_of_text(page, text)
    return ExpectationOutcome(check="text", expected=f"visible text {text!r}", found=found, ok=frame is not None, waited_s=waited)


async def _not_text(page: Page, text: str, wait: float) -> ExpectationOutcome:
    frame, waited = await _wait_for_text(page, text, wait, shown=False)
    return ExpectationOutcome(
        check="not_text",
        expected=f"no visible text {text!r}",
        found="it is not visible" if frame is None else await where_text_is(page, text),
        ok=frame is None,
        waited_s=waited,
    )


async def _wait_for_text(page: Page, text: str, wait: float, shown: bool) -> tuple[Frame | None, float]:
    """Look for `text` in every frame of the page (same- and cross-origin) until it is visible somewhere (`shown`) or
    nowhere (not `shown`), or `wait` seconds have passed; the frame that shows it (None: none does), and how long it
    took. Playwright's locators already reach into open shadow roots; they do not cross frames, hence the loop."""
    start = time.monotonic()
    while True:
        frame = await _showing(page, text)
        if (frame is not None) == shown or time.monotonic() - start >= wait:
            return frame, round(time.monotonic() - start, 2)
        await asyncio.sleep(POLL_S)


async def _showing(page: Page, text: str) -> Frame | None:
    for frame in page.frames:
        with contextlib.suppress(Exception):  # a frame detached while we looked: it shows nothing any more
            if await _visible(frame, text).count() > 0:
                return frame
    return None


def _assert_that(target: Any) -> Any:
    """Playwright's `expect`, imported on first use like the Page types above: loading this module loads no browser library."""
    from playwright.async_api import expect

    return expect(target)


def _visible(frame: Frame, text: str) -> Locator:
    """Playwright's own text and visibility rules: case-insensitive, whitespace-normalised, rendered and not hidden."""
    return frame.get_by_text(text).filter(visible=True)


async def _holds(assertion: Awaitable[None]) -> tuple[bool, float]:
    """Whether a Playwright assertion held within its timeout (it retries until then, then raises AssertionError), and
    the seconds it took to tell."""
    start = time.monotonic()
    try:
        await assertion
    except AssertionError:
        return False, round(time.monotonic() - start, 2)
    return True, round(time.monotonic() - start, 2)


def _ms(seconds: float) -> float:
    """Playwright's timeout in ms; it reads 0 as "wait forever", while 1 ms still checks once."""
    return max(1.0, seconds * 1000)
