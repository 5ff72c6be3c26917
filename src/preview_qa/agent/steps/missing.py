"""What the page shows instead of the element an exact step found none of (#65, 12): the fields labelled most like
its label, the elements named most like its role and name, the visible line most like its text, or the page's test
ids, in words; and how to name one of several it found (#65, 11)."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from preview_qa.agent.page.nearest import describe_nearest, nearest_line, visible_lines
from preview_qa.manifest.page_state import ElementCheck
from preview_qa.manifest.steps import Located
from preview_qa.results import clip
from preview_qa.verdict.checks.page_state import NEAREST_SHOWN, RESEMBLES, nearest_elements, parse_aria_snapshot

if TYPE_CHECKING:
    from playwright.async_api import Page

READ_TIMEOUT_MS = 2000  # the step has failed already: a page that cannot be read in this long gets no "nearest"
TEST_IDS = "b => [...new Set([...b.querySelectorAll('[data-testid]')].map(e => e.dataset.testid))]"
# The roles of what get_by_label finds: form controls, named by their label, aria-label or aria-labelledby
FIELD_ROLES = frozenset(["textbox", "searchbox", "combobox", "listbox", "spinbutton", "slider", "checkbox", "radio", "switch"])


async def instead(page: Page, at: Located) -> str:
    """`nearest: the field labelled 'Email address'` (or why there is none); empty when the page cannot be read."""
    with contextlib.suppress(Exception):
        body = page.locator("body")
        if at.css is not None:  # a selector has no "near": the step says what it looked for
            return ""
        if at.test_id is not None:
            ids = await body.evaluate(TEST_IDS, timeout=READ_TIMEOUT_MS)
            near = [f"{clip(str(i), 80)!r}" for i in ids[:NEAREST_SHOWN]]
            return f"the page's test ids: {', '.join(near)}" if near else "the page has no data-testid"
        if at.text is not None:
            lines = visible_lines(await body.inner_text(timeout=READ_TIMEOUT_MS))
            found = nearest_line(at.text, lines)
            return f"nearest: {describe_nearest(found, lines)}" if found else describe_nearest(found, lines)
        roles = parse_aria_snapshot(await body.aria_snapshot(timeout=READ_TIMEOUT_MS))
        if at.role is not None:
            return nearest_elements(ElementCheck(role=at.role, name=at.name), roles)
        return nearest_fields(at.label or "", roles)
    return ""


async def several(page: Page, at: Located) -> str:
    """How to name one of the several elements `at` found: a role without a name gets the names the page gives that
    role (Playwright's strictness: a locator acts on one element, never the first of many)."""
    if at.css is not None:
        return "narrow the selector to one (an id, an attribute, or a parent's: form.filters select[name=q])"
    if at.test_id is not None:
        return "a test id names one element: give this one its own, or find it by role and name"
    if at.role is None or at.name is not None:
        return "name one (a longer name, exact: true, or its role)"
    names: list[str] = []
    with contextlib.suppress(Exception):
        roles = parse_aria_snapshot(await page.locator("body").aria_snapshot(timeout=READ_TIMEOUT_MS))
        names = list(dict.fromkeys(name for role, name in roles if role == at.role and name))
    example = f"{{role: {at.role}, name: {clip(names[0], 40)}}}" if names else f"{{role: {at.role}, name: ...}}"
    shown = f" (the page's: {', '.join(repr(clip(n, 80)) for n in names[:NEAREST_SHOWN])})" if names else ""
    return f"give its name too, e.g. {example}{shown}"


def nearest_fields(label: str, roles: list[tuple[str, str]]) -> str:
    """`nearest: the field labelled 'E-mail'`: the page's fields whose labels are most like `label`, or what it has."""
    from rapidfuzz import fuzz  # only a failed step looks for what the page has instead

    labels = sorted({name for role, name in roles if role in FIELD_ROLES and name})
    scored = sorted(((fuzz.ratio(label.lower(), name.lower()), name) for name in labels), key=lambda t: (-t[0], t[1]))
    near = [f"the field labelled {clip(name, 80)!r}" for score, name in scored if score >= RESEMBLES][:NEAREST_SHOWN]
    if near:
        return "nearest: " + ", ".join(near)
    if labels:
        shown = ", ".join(repr(clip(name, 80)) for name in labels[:NEAREST_SHOWN])
        return f"the page's {len(labels)} labelled field(s), none labelled like it: {shown}"
    return "the page has no labelled field"
