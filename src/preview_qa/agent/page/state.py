"""The state checks on the live page, through Playwright's own locators and assertions: an element by role and
accessible name (get_by_role, its state read through the role selector's own filters), an attribute and a computed CSS
property of the element a selector finds. Each waits for its condition in one Playwright `expect` call (one row of the
trace, as a Playwright test's assertion), then reports the page as it was when its wait ended: a check that held found
what it asked for; one that failed reads what was there instead."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Awaitable, Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from preview_qa.manifest.page_state import AttributeCheck, CssCheck, ElementCheck
from preview_qa.results import ExpectationOutcome
from preview_qa.verdict.checks.page_state import (
    ElementFound,
    State,
    attribute_outcome,
    css_outcome,
    element_expected,
    element_outcome,
    parse_aria_snapshot,
)

if TYPE_CHECKING:
    from playwright.async_api import Locator, Page

READ_TIMEOUT_MS = 2000
_MIXED = {"checked": "mixed", "pressed": "mixed"}  # neither true nor false: "mixed"; expanded without aria-expanded: unset
_ATTRIBUTES = "(elements, name) => elements.map((e) => e.getAttribute(name))"
_CSS = "(elements, property) => elements.map((e) => getComputedStyle(e).getPropertyValue(property))"


async def check_element(page: Page, check: ElementCheck, wait: float) -> ExpectationOutcome:
    if check.visible is False:  # hidden ones too: none of them may be shown
        shown = _by_role(page, check, include_hidden=True).filter(visible=True)
        held, waited = await holds(expect_that(shown.describe(element_expected(check))).to_have_count(0, timeout=ms(wait)))
        found = ElementFound(0) if held else ElementFound(await shown.count())
        return element_outcome(check, found).model_copy(update={"waited_s": waited})
    states = {s: v for s, v in check.states.items() if s != "visible"}
    holding = _by_role(page, check, **states)
    if "visible" in check.states:
        holding = holding.filter(visible=check.states["visible"])
    wanted = only_one(page, _by_role(page, check)).and_(holding).describe(element_expected(check))
    held, waited = await holds(expect_that(wanted).to_be_attached(timeout=ms(wait)))
    found = ElementFound(1, dict(check.states)) if held else await _element(page, check)
    if found.count == 0:
        found = ElementFound(0, roles=await _roles(page))
    return element_outcome(check, found).model_copy(update={"waited_s": waited})


async def check_attribute(page: Page, check: AttributeCheck, wait: float) -> ExpectationOutcome:
    label, outcome = f"{check.name} of {check.selector!r}", partial(attribute_outcome, check)
    return await _property(
        page, check.selector, label, ("to_have_attribute", _ATTRIBUTES), check.name, check.value, wait, outcome
    )


async def check_css(page: Page, check: CssCheck, wait: float) -> ExpectationOutcome:
    """The computed value, as Playwright's to_have_css reads it (getComputedStyle's getPropertyValue)."""
    label, outcome = f"CSS {check.property} of {check.selector!r}", partial(css_outcome, check)
    return await _property(page, check.selector, label, ("to_have_css", _CSS), check.property, check.value, wait, outcome)


async def _property(
    page: Page,
    selector: str,
    label: str,
    how: tuple[str, str],
    key: str,
    expected: str,
    wait: float,
    outcome: Callable[[int, str | None], ExpectationOutcome],
) -> ExpectationOutcome:
    """A named property of the one element `selector` finds: Playwright's assertion `how[0]` waits for it, and only a
    check that failed reads what the element held instead (script `how[1]`)."""
    found = page.locator(selector)
    wanted = only_one(page, found).describe(label)
    assertion = getattr(expect_that(wanted), how[0])(key, expected, timeout=ms(wait))
    held, waited = await _holding(selector, found, assertion)
    count, value = (1, expected) if held else await _read(found, how[1], key)
    return outcome(count, value).model_copy(update={"waited_s": waited})


def only_one(page: Page, found: Locator) -> Locator:
    """`found`'s element while it finds exactly one, and nothing while it finds two or more: a check of one element
    waits through a moment of two (an old row beside its replacement) where Playwright's strict mode would fail at once.
    The page's root is kept while `found` has no second element; `found` inside it, or the root itself."""
    alone = page.locator(":root").filter(has_not=found.nth(1))
    return alone.locator(found).or_(found.and_(alone))


async def _holding(selector: str, found: Locator, assertion: Awaitable[None]) -> tuple[bool, float]:
    """`holds`, where an error other than the assertion's is a selector Playwright cannot parse: the page was not
    checked, which is no failure of it."""
    try:
        return await holds(assertion)
    except Exception as e:
        try:
            await found.count()
        except Exception:
            raise ValueError(f"the selector {selector!r} cannot be used: {str(e).splitlines()[0]}") from None
        raise


async def _read(found: Locator, script: str, arg: str) -> tuple[int, str | None]:
    """How many elements the selector finds, and what `script` reads of the one (None unless exactly one)."""
    values: list[Any] = []
    with contextlib.suppress(Exception):  # the page went away meanwhile: it showed none
        values = await found.evaluate_all(script, arg)
    return len(values), None if len(values) != 1 or values[0] is None else str(values[0])


def _by_role(page: Page, check: ElementCheck, **state: bool) -> Locator:
    return page.get_by_role(check.role, name=check.name, exact=check.exact, **state)  # type: ignore[arg-type]


async def _element(page: Page, check: ElementCheck) -> ElementFound:
    """What the page holds for a check that did not hold: how many match, and the states of the one."""
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


async def _roles(page: Page) -> list[tuple[str, str]]:
    """The page's elements by role and name, from Playwright's aria snapshot (none if it cannot be read)."""
    with contextlib.suppress(Exception):
        return parse_aria_snapshot(await page.locator("body").aria_snapshot(timeout=READ_TIMEOUT_MS))
    return []


def expect_that(target: Any) -> Any:
    """Playwright's `expect`, imported on first use like the Page types above: loading this module loads no browser
    library."""
    from playwright.async_api import expect

    return expect(target)


async def holds(assertion: Awaitable[None]) -> tuple[bool, float]:
    """Whether a Playwright assertion held within its timeout (it retries until then, then raises AssertionError), and
    the seconds it took to tell."""
    start = time.monotonic()
    try:
        await assertion
    except AssertionError:
        return False, round(time.monotonic() - start, 2)
    return True, round(time.monotonic() - start, 2)


def ms(seconds: float) -> float:
    """Playwright's timeout in ms; it reads 0 as "wait forever", while 1 ms still checks once."""
    return max(1.0, seconds * 1000)
