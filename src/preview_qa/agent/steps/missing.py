"""What the page shows instead of the element an exact step found none of (#65, 12): the fields labelled most like
its label, the elements named most like its role and name, or the visible line most like its text, in words."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from preview_qa.agent.page.nearest import describe_nearest, nearest_line, visible_lines
from preview_qa.manifest.page_state import ElementCheck
from preview_qa.manifest.steps import Located
from preview_qa.results import clip
from preview_qa.verdict.page_state import NEAREST_SHOWN, RESEMBLES, nearest_elements, parse_aria_snapshot

if TYPE_CHECKING:
    from playwright.async_api import Page

READ_TIMEOUT_MS = 2000  # the step has failed already: a page that cannot be read in this long gets no "nearest"
# The roles of what get_by_label finds: form controls, named by their label, aria-label or aria-labelledby
FIELD_ROLES = frozenset(["textbox", "searchbox", "combobox", "listbox", "spinbutton", "slider", "checkbox", "radio", "switch"])


async def instead(page: Page, at: Located) -> str:
    """`nearest: the field labelled 'Email address'` (or why there is none); empty when the page cannot be read."""
    with contextlib.suppress(Exception):
        body = page.locator("body")
        if at.text is not None:
            lines = visible_lines(await body.inner_text(timeout=READ_TIMEOUT_MS))
            found = nearest_line(at.text, lines)
            return f"nearest: {describe_nearest(found, len(lines))}" if found else describe_nearest(found, len(lines))
        roles = parse_aria_snapshot(await body.aria_snapshot(timeout=READ_TIMEOUT_MS))
        if at.role is not None:
            return nearest_elements(ElementCheck(role=at.role, name=at.name), roles)
        return nearest_fields(at.label or "", roles)
    return ""


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
