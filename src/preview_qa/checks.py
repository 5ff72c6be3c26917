"""Deterministic expectations, checked by code: on the live final page (through Playwright) and on the returned data."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any

from preview_qa.manifest import Expectations
from preview_qa.nearest import found_instead_of_text, found_title, found_url, where_text_is
from preview_qa.results import ExpectationOutcome
from preview_qa.text import clip

if TYPE_CHECKING:
    from playwright.async_api import Locator, Page

_MISSING = object()
SHOWN = 160


async def check_page(expect: Expectations, page: Page, wait_s: float | None = None) -> list[ExpectationOutcome]:
    """Evaluate url, title, text and not_text on the live page. Like Playwright's own `expect`, each check waits for
    its condition to hold (not_text: for the text to be gone), all at once, up to `wait_s` seconds (expect.timeout
    unless given); what each one reports found is the page as it was when its wait ended."""
    wait = expect.timeout if wait_s is None else wait_s
    checks = []
    if expect.url is not None:
        checks.append(_url(page, expect.url, wait))
    if expect.title is not None:
        checks.append(_title(page, expect.title, wait))
    checks += [_text(page, text, wait) for text in expect.text]
    checks += [_not_text(page, text, wait) for text in expect.not_text]
    outcomes = await asyncio.gather(*checks)
    return [o.model_copy(update={"waited_s": round(wait, 2)}) for o in outcomes]


async def _url(page: Page, url: str, wait: float) -> ExpectationOutcome:
    ok = await _holds(_assert_that(page).to_have_url(re.compile(re.escape(url)), timeout=_ms(wait)))
    return ExpectationOutcome(check="url", expected=f"URL containing {url!r}",
                              found=page.url if ok else await found_url(page), ok=ok)


async def _title(page: Page, wanted: str, wait: float) -> ExpectationOutcome:
    ok = await _holds(_assert_that(page).to_have_title(re.compile(re.escape(wanted), re.IGNORECASE), timeout=_ms(wait)))
    found = repr(clip(await page.title(), SHOWN)) if ok else await found_title(page)
    return ExpectationOutcome(check="title", expected=f"title containing {wanted!r}", found=found, ok=ok)


async def _text(page: Page, text: str, wait: float) -> ExpectationOutcome:
    visible = await _holds(_assert_that(_visible(page, text)).not_to_have_count(0, timeout=_ms(wait)))
    found = "it is visible" if visible else await found_instead_of_text(page, text)
    return ExpectationOutcome(check="text", expected=f"visible text {text!r}", found=found, ok=visible)


async def _not_text(page: Page, text: str, wait: float) -> ExpectationOutcome:
    gone = await _holds(_assert_that(_visible(page, text)).to_have_count(0, timeout=_ms(wait)))
    return ExpectationOutcome(check="not_text", expected=f"no visible text {text!r}",
                              found="it is not visible" if gone else await where_text_is(page, text), ok=gone)


def _assert_that(target: Any) -> Any:
    """Playwright's `expect`, imported on first use: the verdict imports this module and never needs a browser."""
    from playwright.async_api import expect

    return expect(target)


def _visible(page: Page, text: str) -> Locator:
    """Playwright's own text and visibility rules: case-insensitive, whitespace-normalised, rendered and not hidden."""
    return page.get_by_text(text).filter(visible=True)


async def _holds(assertion: Awaitable[None]) -> bool:
    """Whether a Playwright assertion held within its timeout (it retries until then, then raises AssertionError)."""
    try:
        await assertion
    except AssertionError:
        return False
    return True


def _ms(seconds: float) -> float:
    """Playwright's timeout in ms; it reads 0 as "wait forever", while 1 ms still checks once."""
    return max(1.0, seconds * 1000)


def check_data(expected: dict[str, Any], data: dict[str, Any]) -> list[ExpectationOutcome]:
    """Each expected key (dotted paths reach into objects) holds the expected value in the agent's data."""
    out = []
    for key, want in expected.items():
        got = _lookup(data, key)
        found = "no such key" if got is _MISSING else json.dumps(got, ensure_ascii=False)
        ok = got is not _MISSING and _same(want, got)
        out.append(ExpectationOutcome(check=f"data.{key}", expected=json.dumps(want, ensure_ascii=False),
                                      found=clip(found, SHOWN), ok=ok))
    return out


def _lookup(data: Any, dotted: str) -> Any:
    if isinstance(data, dict) and dotted in data:
        return data[dotted]
    current = data
    for part in dotted.split("."):
        if isinstance(current, dict) and part in current:
            current = current[part]
        elif isinstance(current, list) and part.isdigit() and int(part) < len(current):
            current = current[int(part)]
        else:
            return _MISSING
    return current


def _same(want: Any, got: Any) -> bool:
    """Equal values; strings compare with surrounding whitespace ignored; 3 equals 3.0 but never True."""
    if isinstance(want, str) and isinstance(got, str):
        return want.strip() == got.strip()
    if isinstance(want, bool) or isinstance(got, bool):
        return type(want) is type(got) and want == got
    if isinstance(want, int | float) and isinstance(got, int | float):
        return float(want) == float(got)
    if isinstance(want, dict) and isinstance(got, dict):
        return want.keys() == got.keys() and all(_same(want[k], got[k]) for k in want)
    if isinstance(want, list) and isinstance(got, list):
        return len(want) == len(got) and all(_same(a, b) for a, b in zip(want, got, strict=True))
    return want == got
