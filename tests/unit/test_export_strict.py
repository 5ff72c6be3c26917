"""Exports run under strict mode (the pure part): what a run recorded of an element's locator — how many elements it
matched, this one's place, the landmark or container holding only it — decides the locator written; the run counts
the very chain of calls the export writes; the facts reach the history an export reads. The live counting and the
exported files passing under pytest-playwright are tests/e2e/test_export_strict.py."""

from __future__ import annotations

import ast
import json
from typing import Any

import pytest

from preview_qa.agent.adapter.step_watcher import StepWatcher
from preview_qa.agent.page.settle import PageSettler
from preview_qa.agent.replay.locate import live_locator
from preview_qa.export import Language, export_test
from preview_qa.export.locators import exported
from tests.builders import spec

ORIGIN = "http://127.0.0.1:4000"
TEST = spec("Open the tutorial", 3, start="/")
LINK = {"node_name": "A", "attributes": {"href": "/docs"}, "x_path": "html/body/footer/a", "ax_name": "Tutorial"}
ROLE = {"by": "role", "value": "link", "name": "Tutorial"}
CONTENTINFO = {"by": "role", "value": "contentinfo", "name": None}
TUTORIAL = 'get_by_role("link", name="Tutorial", exact=True)'


def facts(matches: Any = 2, nth: Any = 1, within: Any = None, **locator: Any) -> dict[str, Any]:
    return {**ROLE, **locator, "matches": matches, "nth": nth, "within": within}


def clicked(locator_facts: dict[str, Any] | None, language: Language = Language.PYTHON) -> str:
    """The exported file of a recording whose one step clicks the link with these facts."""
    return clicked_on({**LINK, "locator": locator_facts} if locator_facts is not None else LINK, language)


def clicked_on(element: dict[str, Any], language: Language = Language.PYTHON) -> str:
    """The exported file of a recording whose one step clicks `element`."""
    history = {
        "history": [
            {
                "model_output": {"next_goal": "g", "action": [{"click": {"index": 4}}]},
                "state": {"url": f"{ORIGIN}/", "interacted_element": [element], "tabs": []},
                "result": [{}],
            }
        ]
    }
    source = export_test(TEST, history, ORIGIN, "qa.yml:3", language)
    if language is Language.PYTHON:
        ast.parse(source)  # whatever the run recorded, the file is Python
    return source


@pytest.mark.parametrize(
    "recorded, expected",
    [
        (None, f"page.{TUTORIAL}.click()"),  # a recording made before these facts: as before
        (facts(matches=1, nth=0), f"page.{TUTORIAL}.click()"),
        (facts(within=CONTENTINFO), f'page.get_by_role("contentinfo").{TUTORIAL}.click()'),
        (
            facts(within={"by": "role", "value": "navigation", "name": "Footer"}),
            f'page.get_by_role("navigation", name="Footer", exact=True).{TUTORIAL}.click()',
        ),
        (
            facts(within={"by": "test_id", "value": "plan-pro", "name": "data-testid"}),
            f'page.get_by_test_id("plan-pro").{TUTORIAL}.click()',
        ),
        (
            facts(within={"by": "test_id", "value": "plan-pro", "name": "data-cy"}),
            f'page.locator("[data-cy=\\"plan-pro\\"]").{TUTORIAL}.click()',
        ),
        (facts(within={"by": "css", "value": "#docs", "name": None}), f'page.locator("#docs").{TUTORIAL}.click()'),
        (facts(matches=3, nth=2), f"page.{TUTORIAL}.nth(2).click()"),
        (facts(nth=None), 'page.locator("xpath=/html/body/footer/a").click()'),  # the locator missed the element
        (facts(matches=0, nth=None), 'page.locator("xpath=/html/body/footer/a").click()'),
        (facts(value="button", within=CONTENTINFO), f"page.{TUTORIAL}.click()"),  # facts of another locator: not used
        (facts(matches="2", within=CONTENTINFO), f"page.{TUTORIAL}.click()"),  # facts no run writes: not used
        (facts(within={"by": "shadow", "value": "x"}), f"page.{TUTORIAL}.nth(1).click()"),  # a scope no run writes
    ],
)
def test_the_locator_is_scoped_as_the_run_found_it(recorded: dict[str, Any] | None, expected: str) -> None:
    source = clicked(recorded)
    assert expected in [line.strip() for line in source.splitlines()], source


def test_a_locator_told_apart_only_by_its_place_or_its_xpath_says_why() -> None:
    by_place = clicked(facts(matches=3, nth=2))
    assert "# 3 elements matched this locator when the test ran, and no landmark or container held only the agent's" in by_place
    missed = clicked(facts(matches=2, nth=None))
    assert "# the role locator matched 2 element(s), not this one, when the test ran: its XPath" in missed
    unknown = clicked({**ROLE, "matches": None, "nth": None, "within": None, "unknown": "the page did not answer\nin 3 s"})
    said = "# not known to be the only match: the run could not count its matches (the page did not answer in 3 s)"
    assert f"{said}\n    page.{TUTORIAL}.click()" in unknown
    lines = [line.strip() for line in clicked(facts(within=CONTENTINFO)).splitlines()]
    scoped = next(i for i, line in enumerate(lines) if line.endswith(".click()"))
    assert lines[scoped - 1].startswith("# step "), lines  # a landmark needs no excuse


def test_the_typescript_spec_is_scoped_the_same_way() -> None:
    scoped = clicked(facts(within=CONTENTINFO), Language.TS)
    assert 'await page.getByRole("contentinfo").getByRole("link", { name: "Tutorial", exact: true }).click();' in scoped
    assert '.getByRole("link", { name: "Tutorial", exact: true }).nth(2).click();' in clicked(facts(3, 2), Language.TS)


def test_page_text_in_a_scope_stays_a_string() -> None:
    sly = 'Footer", exact=True).click()\nimport os  # '
    python = clicked(facts(within={"by": "role", "value": "navigation", "name": sly}))
    assert "\nimport os" not in python and 'name="Footer\\", exact=True).click()\\nimport os  # "' in python
    assert "\nimport os" not in clicked(facts(within={"by": "role", "value": "navigation", "name": sly}), Language.TS)


class Calls:
    """A stand-in for a Playwright page or locator that notes each call made on it."""

    def __init__(self) -> None:
        self.made: list[str] = []

    def __getattr__(self, method: str) -> Any:
        def call(arg: Any, **options: Any) -> Calls:
            said = [json.dumps(arg), *(f"{k}={json.dumps(v) if isinstance(v, str) else v}" for k, v in options.items())]
            self.made.append(f"{method}({', '.join(said)})")
            return self

        return call


@pytest.mark.parametrize(
    "element, recorded",
    [
        (LINK, facts(within=CONTENTINFO)),
        ({"node_name": "SPAN", "ax_name": "Next"}, facts(by="text", value="Next", name=None, nth=1)),
        (
            {"node_name": "INPUT", "attributes": {"aria-label": "Find"}, "ax_name": ""},
            facts(by="label", value="Find", name=None, within={"by": "test_id", "value": "card", "name": "data-test"}),
        ),
        (
            {"node_name": "INPUT", "attributes": {"type": "password", "placeholder": "Code"}, "ax_name": ""},
            facts(by="placeholder", value="Code", name=None, within={"by": "css", "value": "#signup", "name": None}),
        ),
    ],
)
def test_a_run_counts_the_very_locator_the_export_writes(element: dict[str, Any], recorded: dict[str, Any]) -> None:
    page, locator = Calls(), exported({**element, "locator": recorded})
    assert locator.within is not None or locator.nth is not None  # the facts were used
    live_locator(page, locator)  # type: ignore[arg-type]  # only the calls made on it are looked at
    written = clicked_on({**element, "locator": recorded})
    assert f"page.{'.'.join(page.made)}.click()" in written, (page.made, written)


def test_the_facts_reach_the_history_by_step_and_action() -> None:
    watcher = StepWatcher(_nothing, PageSettler())
    footer = facts(within=CONTENTINFO)
    watcher.located[(2, 1)] = footer
    history = {
        "history": [
            {"metadata": {"step_number": 1}, "state": {"interacted_element": [None, dict(LINK)]}},
            {"metadata": {"step_number": 2}, "state": {"interacted_element": [dict(LINK), dict(LINK)]}},
            {"metadata": {}, "state": {"interacted_element": [dict(LINK)]}},
        ]
    }
    elements = [item["state"]["interacted_element"] for item in watcher.with_locators(history)["history"]]
    assert [[e.get("locator") if e else None for e in step] for step in elements] == [[None, None], [None, footer], [None]]


async def _nothing() -> bytes | None:
    return None
