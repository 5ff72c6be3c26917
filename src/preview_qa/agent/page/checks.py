"""Deterministic expectations checked by code on the live final page, through Playwright."""

from __future__ import annotations

import asyncio
import re
import time
from typing import TYPE_CHECKING

from preview_qa.agent.page.accessibility import axe_version, violations_on
from preview_qa.agent.page.nearest import (
    found_instead_of_text,
    found_title,
    found_url,
    frame_name,
    nearest_line,
    visible_lines,
    where_text_is,
)
from preview_qa.agent.page.shown import ClosedRoots, look_for_text
from preview_qa.agent.page.sightings import Appearance, appeared, not_appeared
from preview_qa.agent.page.state import check_attribute, check_css, check_element, expect_that, holds, ms
from preview_qa.manifest.models import Expectations
from preview_qa.results import ExpectationOutcome, clip
from preview_qa.verdict.checks.accessibility import accessibility_outcome
from preview_qa.verdict.checks.data_checks import SHOWN

if TYPE_CHECKING:
    from playwright.async_api import Page

    from preview_qa.agent.page.sightings import Sightings


async def check_page(
    expect: Expectations, page: Page, wait_s: float | None = None, sightings: Sightings | None = None
) -> list[ExpectationOutcome]:
    """Evaluate url, title, text, not_text, appeared, not_appeared and the state checks (element, attribute, css) on
    the live page, then accessibility (axe-core, no wait). Like Playwright's own `expect`, each check waits for its
    condition to hold (not_text: for the text to be gone), all at once, up to `wait_s` seconds (expect.timeout unless
    given); what each one reports found is the page as it was when its wait ended, and waited_s how long that wait
    really was. Text counts where a person could see it (agent/page/shown.js); appeared and not_appeared judge what
    the pages showed since the last action that changed them (`sightings`)."""
    wait = expect.timeout if wait_s is None else wait_s
    closed = ClosedRoots(page, sightings.session(page) if sightings is not None else None)
    checks = []
    if expect.url is not None:
        checks.append(_url(page, expect.url, wait))
    if expect.title is not None:
        checks.append(_title(page, expect.title, wait))
    checks += [_text(page, text, wait, sightings, closed) for text in expect.text]
    checks += [_not_text(page, text, wait, closed) for text in expect.not_text]
    if sightings is not None:
        checks += [_appeared(page, sightings, text, wait) for text in expect.appeared]
        checks += [_not_appeared(page, sightings, text, expect.timeout, wait) for text in expect.not_appeared]
    checks += [check_element(page, element, wait) for element in expect.element]
    checks += [check_attribute(page, attribute, wait) for attribute in expect.attribute]
    checks += [check_css(page, css, wait) for css in expect.css]
    try:
        outcomes = [o.model_copy(update={"timeout_s": round(wait, 2)}) for o in await asyncio.gather(*checks)]
    finally:
        await closed.close()
    if expect.accessibility is not None:  # after the waits: on the page the other checks saw settle
        violations = await violations_on(page, expect.accessibility)
        outcomes.append(accessibility_outcome(expect.accessibility, violations, axe_version()))
    return outcomes


async def _url(page: Page, url: str, wait: float) -> ExpectationOutcome:
    ok, waited = await holds(expect_that(page).to_have_url(re.compile(re.escape(url)), timeout=ms(wait)))
    return ExpectationOutcome(
        check="url", expected=f"URL containing {url!r}", found=page.url if ok else await found_url(page), ok=ok, waited_s=waited
    )


async def _title(page: Page, wanted: str, wait: float) -> ExpectationOutcome:
    ok, waited = await holds(expect_that(page).to_have_title(re.compile(re.escape(wanted), re.IGNORECASE), timeout=ms(wait)))
    found = repr(clip(await page.title(), SHOWN)) if ok else await found_title(page)
    return ExpectationOutcome(check="title", expected=f"title containing {wanted!r}", found=found, ok=ok, waited_s=waited)


async def _text(page: Page, text: str, wait: float, sightings: Sightings | None, closed: ClosedRoots) -> ExpectationOutcome:
    look = await look_for_text(page, text, wait, shown=True, closed=closed)
    if look.hit is not None:
        found = f"it is visible{frame_name(look.hit.frame)}"
    else:
        found = found_instead_of_text(look, text) + _came_and_went(sightings, text)
    return ExpectationOutcome(
        check="text", expected=f"visible text {text!r}", found=found, ok=look.hit is not None, waited_s=look.waited_s
    )


async def _not_text(page: Page, text: str, wait: float, closed: ClosedRoots) -> ExpectationOutcome:
    look = await look_for_text(page, text, wait, shown=False, closed=closed)
    return ExpectationOutcome(
        check="not_text",
        expected=f"no visible text {text!r}",
        found="it is not visible" if look.hit is None else where_text_is(look.hit, text),
        ok=look.hit is None,
        waited_s=look.waited_s,
    )


def _came_and_went(sightings: Sightings | None, text: str) -> str:
    """For a `text` check that failed: that the text did show after the last action, and went before the checks."""
    seen = sightings.shown_since(text, sightings.marked_at) if sightings is not None else None
    if sightings is None or seen is None:
        return ""
    after = max(0.0, seen.since - sightings.marked_at)
    return (
        f"; it was visible {after:.1f} s after the last action, in {clip(seen.text, SHOWN)!r}, and gone when the "
        "checks ran: to check text that comes and goes (a toast), use `appeared`"
    )


async def _appeared(page: Page, sightings: Sightings, text: str, wait: float) -> ExpectationOutcome:
    seen = await appeared(page, sightings, text, wait)
    expected = f"text {text!r} visible at some moment after the last action"
    if seen.seen:
        found = f"it was visible {_when_seen(sightings, seen)}"
    else:
        found = f"it was not visible at any moment after it{_nearest_since(sightings, text)}"
    return ExpectationOutcome(check="appeared", expected=expected, found=found, ok=seen.seen, waited_s=seen.waited_s)


async def _not_appeared(page: Page, sightings: Sightings, text: str, window: float, wait: float) -> ExpectationOutcome:
    seen = await not_appeared(page, sightings, text, window, wait)
    watched = time.time() - sightings.marked_at
    found = f"it was not visible at any moment in the {watched:.1f} s after it"
    if seen.seen:
        found = f"it was visible {_when_seen(sightings, seen)}"
    return ExpectationOutcome(
        check="not_appeared",
        expected=f"no visible text {text!r} at any moment after the last action",
        found=found,
        ok=not seen.seen,
        waited_s=seen.waited_s,
    )


def _when_seen(sightings: Sightings, seen: Appearance) -> str:
    """`0.4 s after it for 1.0 s, in 'Saved!'`: when the record saw it after the mark, and for how long; or where the
    page showed it when the record has no line of it."""
    if seen.sighting is None:
        assert seen.hit is not None
        return f"after it{frame_name(seen.hit.frame)}, in {clip(seen.hit.line, SHOWN)!r}"
    line = seen.sighting
    lasted = f" for {line.until - line.since:.1f} s" if line.until is not None else ""
    return f"{max(0.0, line.since - sightings.marked_at):.1f} s after it{lasted}, in {clip(line.text, SHOWN)!r}"


def _nearest_since(sightings: Sightings, text: str) -> str:
    lines = [s.text for s in sightings.lines if s.until is None or s.until >= sightings.marked_at]
    nearest = nearest_line(text, visible_lines("\n".join(lines)))
    return f" (the closest text it showed: {nearest.line!r})" if nearest is not None else ""
