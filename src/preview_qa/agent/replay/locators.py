"""Which Playwright locator finds a recorded element (pure): Playwright's recommended order — role and accessible name,
label, placeholder, text, test id — and a CSS or XPath fallback, with the reason, only when the recording offers
nothing else; and the chain of Playwright calls that finds it, which the export writes in Python or TypeScript and a run
calls on the live page to count what it finds there (agent/replay/locate.py), so that the same locator is counted and
written."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class By(StrEnum):
    """How a locator finds its element, in Playwright's order of preference."""

    ROLE = "role"
    LABEL = "label"
    PLACEHOLDER = "placeholder"
    TEXT = "text"
    TEST_ID = "test_id"
    CSS = "css"
    XPATH = "xpath"


@dataclass(frozen=True)
class Locator:
    """`by` with its value (and, for a role, the accessible name; for a test id, its attribute), looked for `within`
    another locator's element, the `nth` of its matches (from 0) when nothing else tells them apart; `fallback` says
    why a weaker locator than Playwright recommends was written."""

    by: By
    value: str
    name: str | None = None
    fallback: str | None = None
    within: Locator | None = None
    nth: int | None = None
    exact: bool = True  # the name, label or text matched whole; false: contained, case-insensitive (a manifest's step)

    def facts(self) -> dict[str, str | None]:
        """What a run records of the locator it counted (see `recorded`)."""
        return {"by": self.by.value, "value": self.value, "name": self.name}


@dataclass(frozen=True)
class Call:
    """One call of a locator's chain: Playwright's method as Python names it (TypeScript's is its camelCase), its one
    argument and its options."""

    method: str
    arg: str | int
    options: dict[str, str | bool] = field(default_factory=dict)


_BY_TEXT = {By.LABEL: "get_by_label", By.PLACEHOLDER: "get_by_placeholder", By.TEXT: "get_by_text"}


def calls(locator: Locator) -> list[Call]:
    """The calls that find the locator's element from the page: its scope's first, then its own, then `nth`."""
    chain = calls(locator.within) if locator.within is not None else []
    value = locator.value
    exact: dict[str, str | bool] = {"exact": True} if locator.exact else {}
    if locator.by is By.ROLE:
        chain.append(Call("get_by_role", value, {} if locator.name is None else {"name": locator.name, **exact}))
    elif locator.by in _BY_TEXT:
        chain.append(Call(_BY_TEXT[locator.by], value, exact))
    elif locator.by is By.TEST_ID and locator.name == "data-testid":
        chain.append(Call("get_by_test_id", value))
    elif locator.by is By.TEST_ID:
        chain.append(Call("locator", f"[{locator.name}={json.dumps(value)}]"))
    else:
        chain.append(Call("locator", ("xpath=" if locator.by is By.XPATH else "") + value))
    return chain if locator.nth is None else [*chain, Call("nth", locator.nth)]


def recorded(facts: Any) -> Locator | None:
    """A locator as a run recorded it (`Locator.facts`), or None for anything else."""
    if not isinstance(facts, dict) or facts.get("by") not in set(By) or not isinstance(facts.get("value"), str):
        return None
    name = facts.get("name")
    return Locator(By(facts["by"]), facts["value"], name if isinstance(name, str) else None)


# ARIA's implicit roles of the tags browser-use records; a tag or input type missing here has none Playwright can use
# (a password or file input), so a label or placeholder finds it instead.
_TAG_ROLES = {
    "a": "link",
    "button": "button",
    "textarea": "textbox",
    "img": "img",
    "option": "option",
    "h1": "heading",
    "h2": "heading",
    "h3": "heading",
    "h4": "heading",
    "h5": "heading",
    "h6": "heading",
    "li": "listitem",
    "summary": "button",
    "details": "group",
    "dialog": "dialog",
    "nav": "navigation",
}
_INPUT_ROLES = {
    "text": "textbox",
    "email": "textbox",
    "tel": "textbox",
    "url": "textbox",
    "search": "searchbox",
    "checkbox": "checkbox",
    "radio": "radio",
    "submit": "button",
    "button": "button",
    "reset": "button",
    "image": "button",
    "range": "slider",
    "number": "spinbutton",
}
TEST_ID_ATTRIBUTES = ("data-testid", "data-test-id", "data-test", "data-cy")


def role_of(element: dict[str, Any]) -> str | None:
    """The element's ARIA role as Playwright's getByRole names it: an explicit role, else its tag's implicit one."""
    attributes = element.get("attributes") or {}
    explicit = str(attributes.get("role") or "").split()
    if explicit:
        return explicit[0]
    tag = str(element.get("node_name") or "").lower()
    if tag == "input":
        return _INPUT_ROLES.get(str(attributes.get("type") or "text").lower())
    if tag == "select":
        return "listbox" if "multiple" in attributes else "combobox"
    if tag == "a" and "href" not in attributes:
        return None  # an anchor without href is no link
    return _TAG_ROLES.get(tag)


def locate(element: dict[str, Any]) -> Locator:
    """The first locator in Playwright's order that the recording can give for the element. Whether it is unique is
    known only on the live page: a run records it there, and the export scopes it by that (export/locators.py)."""
    attributes = {str(k): str(v) for k, v in (element.get("attributes") or {}).items()}
    name = " ".join(str(element.get("ax_name") or "").split())
    role = role_of(element)
    if role and name:
        return Locator(By.ROLE, role, name)
    if attributes.get("aria-label"):
        return Locator(By.LABEL, attributes["aria-label"])
    placeholder = " ".join(attributes.get("placeholder", "").split())
    if placeholder and (not name or name == placeholder):
        return Locator(By.PLACEHOLDER, placeholder)
    if name and str(element.get("node_name") or "").lower() in ("input", "select", "textarea"):
        return Locator(By.LABEL, name)  # a form control's name without aria-label or placeholder: its <label>
    if name:  # an element with a name but no role Playwright knows: the text it shows
        return Locator(By.TEXT, name)
    for attribute in TEST_ID_ATTRIBUTES:
        if attributes.get(attribute):
            return Locator(By.TEST_ID, attributes[attribute], name=attribute)
    if attributes.get("id") and plain_id(attributes["id"]):
        return Locator(
            By.CSS,
            f"#{attributes['id']}",
            fallback="no role with a name, label, placeholder, text or test id was recorded: its id",
        )
    if attributes.get("name"):
        tag = str(element.get("node_name") or "").lower() or "*"
        value = attributes["name"].replace("\\", "\\\\").replace('"', '\\"')
        return Locator(
            By.CSS,
            f'{tag}[name="{value}"]',
            fallback="no role with a name, label, placeholder, text or test id was recorded: its name attribute",
        )
    return Locator(
        By.XPATH,
        "/" + str(element.get("x_path") or "").lstrip("/"),
        fallback="nothing but its place in the page was recorded: an XPath, which breaks when the layout does",
    )


def plain_id(value: str) -> bool:
    return value.replace("-", "").replace("_", "").isalnum() and not value[0].isdigit()
