"""Deterministic expectations, checked by code: on the live final page (through Playwright) and on the returned data."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from preview_qa.manifest import Expectations
from preview_qa.nearest import found_instead_of_text, found_title, found_url, where_text_is
from preview_qa.results import ExpectationOutcome
from preview_qa.text import clip

if TYPE_CHECKING:
    from playwright.async_api import Page

_MISSING = object()
SHOWN = 160


async def check_page(expect: Expectations, page: Page) -> list[ExpectationOutcome]:
    """Evaluate url, title, text and not_text on the page exactly as it is now."""
    out: list[ExpectationOutcome] = []
    if expect.url is not None:
        ok = expect.url in page.url
        out.append(ExpectationOutcome(check="url", expected=f"URL containing {expect.url!r}",
                                      found=page.url if ok else await found_url(page), ok=ok))
    if expect.title is not None:
        title = await page.title()
        ok = expect.title.casefold() in title.casefold()
        out.append(ExpectationOutcome(check="title", expected=f"title containing {expect.title!r}",
                                      found=repr(clip(title, SHOWN)) if ok else await found_title(page), ok=ok))
    for text in expect.text:
        visible = await _is_visible(page, text)
        found = "it is visible" if visible else await found_instead_of_text(page, text)
        out.append(ExpectationOutcome(check="text", expected=f"visible text {text!r}", found=found, ok=visible))
    for text in expect.not_text:
        visible = await _is_visible(page, text)
        out.append(ExpectationOutcome(check="not_text", expected=f"no visible text {text!r}",
                                      found=await where_text_is(page, text) if visible else "it is not visible",
                                      ok=not visible))
    return out


async def _is_visible(page: Page, text: str) -> bool:
    """Playwright's own text and visibility rules: case-insensitive, whitespace-normalised, rendered and not hidden."""
    return await page.get_by_text(text).filter(visible=True).count() > 0


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
