"""The state checks on the live page, through Playwright's own locators: an element by role and accessible name
(get_by_role, its state read through the role selector's own filters), an attribute and a computed CSS property of the
element a selector finds. Each waits for its condition, as Playwright's expect does, and reports the page as it was
when its wait ended."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from preview_qa.manifest.page_state import AttributeCheck, CssCheck, ElementCheck
from preview_qa.results import ExpectationOutcome
from preview_qa.verdict.page_state import (
    ElementFound,
    State,
    attribute_outcome,
    css_outcome,
    element_holds,
    element_outcome,
    parse_aria_snapshot,
)

if TYPE_CHECKING:
    from playwright.async_api import Locator, Page

POLL_S = 0.1  # between two looks, as Playwright's own expect retries
READ_TIMEOUT_MS = 2000
_MIXED = {"checked": "mixed", "pressed": "mixed"}  # neither true nor false: "mixed"; expanded without aria-expanded: unset
Found = TypeVar("Found")


async def check_element(page: Page, check: ElementCheck, wait: float) -> ExpectationOutcome:
    found, waited = await _until(lambda: _element(page, check), lambda f: element_holds(check, f), wait)
    if found.count == 0 and check.visible is not False:
        found = ElementFound(0, roles=await _roles(page))
    return element_outcome(check, found).model_copy(update={"waited_s": waited})


async def check_attribute(page: Page, check: AttributeCheck, wait: float) -> ExpectationOutcome:
    def read(element: Locator) -> Awaitable[str | None]:
        return element.get_attribute(check.name, timeout=READ_TIMEOUT_MS)

    (count, value), waited = await _until(lambda: _one(page, check.selector, read), lambda f: f == (1, check.value), wait)
    return attribute_outcome(check, count, value).model_copy(update={"waited_s": waited})


async def check_css(page: Page, check: CssCheck, wait: float) -> ExpectationOutcome:
    """The computed value, read as Playwright's to_have_css reads it (getComputedStyle's getPropertyValue)."""

    def read(element: Locator) -> Awaitable[Any]:
        script = "(e, p) => getComputedStyle(e).getPropertyValue(p)"
        return element.evaluate(script, check.property, timeout=READ_TIMEOUT_MS)

    (count, value), waited = await _until(lambda: _one(page, check.selector, read), lambda f: f == (1, check.value), wait)
    return css_outcome(check, count, value).model_copy(update={"waited_s": waited})


async def _until(look: Callable[[], Awaitable[Found]], holds: Callable[[Found], bool], wait: float) -> tuple[Found, float]:
    """Look until what is found holds, or `wait` seconds have passed: the last look, and how long it took."""
    start = time.monotonic()
    while True:
        found = await look()
        if holds(found) or time.monotonic() - start >= wait:
            return found, round(time.monotonic() - start, 2)
        await asyncio.sleep(POLL_S)


def _by_role(page: Page, check: ElementCheck, **state: bool) -> Locator:
    return page.get_by_role(check.role, name=check.name, exact=check.exact, **state)  # type: ignore[arg-type]


async def _element(page: Page, check: ElementCheck) -> ElementFound:
    if check.visible is False:  # hidden ones too: none of them may be shown
        return ElementFound(await _by_role(page, check, include_hidden=True).filter(visible=True).count())
    element = _by_role(page, check)
    count = await element.count()
    if count != 1:
        return ElementFound(count)
    return ElementFound(1, {state: await _state(page, check, element, state) for state in check.states})


async def _state(page: Page, check: ElementCheck, element: Locator, state: str) -> State:
    """The state as Playwright's role selector reads it: the one element is the one that matches with state=true,
    or with state=false (a `mixed` checkbox, a button without aria-expanded, match neither)."""
    if state == "visible":
        return await element.is_visible()
    for value in (True, False):
        if await _by_role(page, check, **{state: value}).count() == 1:
            return value
    return _MIXED.get(state)


async def _one(page: Page, selector: str, read: Callable[[Locator], Awaitable[Any]]) -> tuple[int, str | None]:
    """How many elements the selector finds, and what `read` gives of the one (None unless exactly one)."""
    element = page.locator(selector)
    try:
        count = await element.count()
    except Exception as e:  # a selector Playwright cannot parse: the page was not checked, which is no failure of it
        raise ValueError(f"the selector {selector!r} cannot be used: {str(e).splitlines()[0]}") from None
    if count != 1:
        return count, None
    try:
        value = await read(element)
    except Exception:  # replaced between the count and the read: the next look sees the new one
        return 0, None
    return 1, None if value is None else str(value)


async def _roles(page: Page) -> list[tuple[str, str]]:
    """The page's elements by role and name, from Playwright's aria snapshot (none if it cannot be read)."""
    with contextlib.suppress(Exception):
        return parse_aria_snapshot(await page.locator("body").aria_snapshot(timeout=READ_TIMEOUT_MS))
    return []
