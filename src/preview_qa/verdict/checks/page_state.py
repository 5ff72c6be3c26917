"""Pure: what the live page showed for a state check (an element by role and name, an attribute, a CSS property) ->
its expectation outcome, saying what was found instead: "checked is false", "2 elements match", or the nearest
elements by role and name."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from preview_qa.manifest.page_state import AttributeCheck, CssCheck, ElementCheck
from preview_qa.results import ExpectationOutcome, clip

State = bool | str | None  # a state as the page has it: true, false, "mixed" (checked, pressed) or None (not set)
NEAREST_SHOWN = 3
RESEMBLES = 50  # rapidfuzz score (0-100) under which a name is too unlike the wanted one to be named
VALUE_LIMIT = 200
_WORDS = {
    "visible": ("visible", "hidden"),
    "checked": ("checked", "not checked"),
    "pressed": ("pressed", "not pressed"),
    "expanded": ("expanded", "collapsed"),
    "selected": ("selected", "not selected"),
    "disabled": ("disabled", "enabled"),
}
# One line of Playwright's aria snapshot: `- switch "Dark mode" [checked]`, `- link "Help":`, `- text: Email me`.
_SNAPSHOT_LINE = re.compile(r'^\s*- (?P<role>[a-z]+)(?: "(?P<name>(?:[^"\\]|\\.)*)")?')


@dataclass(frozen=True)
class ElementFound:
    """What the page held for an element check when its wait ended: how many elements matched its role and name
    (for `visible: false`: how many of them are shown), the states of the one that did, and the page's roles."""

    count: int
    states: dict[str, State] = field(default_factory=dict)
    roles: list[tuple[str, str]] = field(default_factory=list)  # (role, name) of the page's elements, for "nearest"


def element_expected(check: ElementCheck) -> str:
    """`switch 'Dark mode' checked`: the element and every state it must be in."""
    if check.visible is False:
        return f"no {check.described()} visible"
    return f"{check.described()} " + ", ".join(_WORDS[s][0 if v else 1] for s, v in check.states.items())


def element_holds(check: ElementCheck, found: ElementFound) -> bool:
    if check.visible is False:
        return found.count == 0
    return found.count == 1 and all(found.states.get(s) == v for s, v in check.states.items())


def element_outcome(check: ElementCheck, found: ElementFound) -> ExpectationOutcome:
    """The outcome of an element check: what it found ("checked is false", "2 elements match", "no element with role
    switch named 'Dark mode'; nearest: ...")."""
    ok = element_holds(check, found)
    return ExpectationOutcome(check="element", expected=element_expected(check), found=_element_found(check, found, ok), ok=ok)


def _element_found(check: ElementCheck, found: ElementFound, ok: bool) -> str:
    if check.visible is False:
        return "none is visible" if ok else f"{found.count} visible element(s) match"
    if found.count == 0:
        named = f" named {check.name!r}" if check.name is not None else ""
        return f"no element with role {check.role}{named}; {nearest_elements(check, found.roles)}"
    if found.count > 1:
        return f"{found.count} elements match (a check needs exactly one: give more of the name, or exact: true)"
    if ok:
        return "it is " + ", ".join(_WORDS[s][0 if v else 1] for s, v in check.states.items())
    return "; ".join(f"{s} is {_said(v)}" for s, v in found.states.items() if v != check.states.get(s))


def _said(value: State) -> str:
    return "not set" if value is None else str(value).lower()


def parse_aria_snapshot(snapshot: str) -> list[tuple[str, str]]:
    """(role, name) of each element in Playwright's aria snapshot of the page (text nodes and /url lines left out)."""
    found = []
    for line in snapshot.splitlines():
        match = _SNAPSHOT_LINE.match(line)
        if match and match["role"] != "text":
            found.append((match["role"], (match["name"] or "").replace('\\"', '"')))
    return found


def nearest_elements(check: ElementCheck, roles: list[tuple[str, str]]) -> str:
    """`nearest: button 'Dark mode', switch 'Dark theme'`: elements with the wanted name under another role, then
    with the wanted role under the names most like it; or what the page has of that role."""
    if check.name is None:
        return "the page has none"
    from rapidfuzz import fuzz  # only a failing check: not on every run's start

    want = check.name.lower()
    scored = sorted(
        {(fuzz.ratio(want, name.lower()) + (10 if role == check.role else 0), role, name) for role, name in roles if name},
        key=lambda t: (-t[0], t[1], t[2]),
    )
    near = [f"{role} {clip(name, 80)!r}" for score, role, name in scored if score >= RESEMBLES][:NEAREST_SHOWN]
    if near:
        return "nearest: " + ", ".join(near)
    same = sum(1 for role, _ in roles if role == check.role)
    return f"the page has {same} {check.role} element(s), none named like it" if same else f"the page has no {check.role}"


def attribute_outcome(check: AttributeCheck, count: int, value: str | None) -> ExpectationOutcome:
    """`found`: "it is 'light'", "'html' has no data-theme attribute", "no element matches ...", "3 elements match"."""
    ok = count == 1 and value == check.value
    expected = f"{check.name}={check.value!r} on {check.selector!r}"
    if count != 1 or ok:
        found = _selected(check.selector, count) if count != 1 else f"it is {clip(check.value, VALUE_LIMIT)!r}"
    else:
        found = f"{check.selector!r} has no {check.name} attribute" if value is None else f"it is {clip(value, VALUE_LIMIT)!r}"
    return ExpectationOutcome(check="attribute", expected=expected, found=found, ok=ok)


def css_outcome(check: CssCheck, count: int, value: str | None) -> ExpectationOutcome:
    """`found`: "it is 'rgb(255, 255, 255)'", "no element matches ...", "3 elements match"."""
    ok = count == 1 and value == check.value
    expected = f"CSS {check.property} {check.value!r} on {check.selector!r}"
    found = _selected(check.selector, count) if count != 1 else f"it is {clip(value or '', VALUE_LIMIT)!r}"
    return ExpectationOutcome(check="css", expected=expected, found=found, ok=ok)


def _selected(selector: str, count: int) -> str:
    if count == 0:
        return f"no element matches {selector!r}"
    return f"{count} elements match {selector!r} (a check needs exactly one: make the selector more precise)"
