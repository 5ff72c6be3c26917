"""The locator an exported test uses for a recorded element (pure): Playwright's recommended one
(agent/replay/locators.py), made unique as the run found it on the live page — within the landmark or container that
held only this element, else the nth of its matches — so that Playwright's strict mode never stops the test."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from preview_qa.agent.replay.locators import By, Call, Locator, calls, locate, recorded
from preview_qa.results import one_line

__all__ = ["By", "Call", "Locator", "calls", "exported"]


def exported(element: dict[str, Any]) -> Locator:
    """`locate(element)`, scoped by what the run recorded of it (`element["locator"]`: how many elements the same
    locator matched when the action ran, this one's place among them, and the landmark or container in which it was
    the only one). A recording without those facts, or with facts of another locator, gets the locator unscoped."""
    base = locate(element)
    facts = element.get("locator")
    if not isinstance(facts, dict) or recorded(facts) != replace(base, fallback=None):
        return base
    matches, nth = facts.get("matches"), facts.get("nth")
    if not isinstance(matches, int):  # not counted: the run says why
        why = facts.get("unknown")
        if not isinstance(why, str):
            return base
        why = one_line("".join(c if c.isprintable() else " " for c in why), 160)
        return replace(base, fallback=f"not known to be the only match: the run could not count its matches ({why})")
    if not isinstance(nth, int):  # a role or name Playwright computes otherwise than Chromium did: not this element
        return _by_xpath(element, f"the {base.by.value} locator matched {matches} element(s), not this one, when the test ran")
    if matches <= 1:
        return base
    within = recorded(facts.get("within"))
    if within is not None:
        return replace(base, within=within)
    return replace(
        base,
        nth=nth,
        fallback=f"{matches} elements matched this locator when the test ran, and no landmark or container held only "
        f"the agent's: the one at index {nth}, by its place in the page",
    )


def _by_xpath(element: dict[str, Any], why: str) -> Locator:
    return Locator(By.XPATH, "/" + str(element.get("x_path") or "").lstrip("/"), fallback=f"{why}: its XPath")
