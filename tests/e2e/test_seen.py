"""End to end: text counts only where a person could see it on top (issue #63), on the fixture pages of tests/site/seen.py,
in one run of the CLI with a scripted agent. A text under a dialog over the whole viewport and a text the colour of its
background fail `text` saying why, and a quote of covered text grounds nothing; a stylesheet's ::after and a closed
shadow root's text pass `text` and ground a quote; a sticky header, a cookie banner over the bottom fifth and a toast in
a corner hide nothing else of the page."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from typing import Any

import pytest

from preview_qa.demo.scripted_llm import ScriptedLLM
from tests.conftest import CliRun, preview_qa_run
from tests.site.seen import SeenSite

pytestmark = pytest.mark.e2e

MANIFEST = """\
version: 1
defaults: {max_steps: 3, timeout: 90}
tests:
  - name: covered text
    start: /covered
    task: "[covered] Check that the order was confirmed."
    expect: {text: Order confirmed, timeout: 1}
  - name: covered quote
    start: /covered
    task: "[covered-quote] Check that the order was confirmed."
  - name: same colour
    start: /same-colour
    task: "[same-colour] Check that the order was confirmed."
    expect: {text: Order confirmed, timeout: 1}
  - name: drawn text
    start: /drawn
    task: "[drawn] Check that the settings were saved."
    expect: {text: [Settings saved, "Plan: Pro"], not_text: [Free]}
  - name: closed root not_text
    start: /drawn
    task: "[drawn-not] Check that the plan is not shown."
    expect: {not_text: "Plan: Pro", timeout: 1}
  - name: overlays
    start: /overlays
    task: "[overlays] Check the orders page."
    expect: {text: [Three orders placed, "Total: 3 orders", We use cookies, Saved, "Order line 59"]}
"""


def _done(match: str, quotes: list[str]) -> dict[str, Any]:
    return {"match": match, "turns": [{"done": {"status": "pass", "reason": "It works.", "quotes": quotes}}]}


SCENARIOS = [
    _done("[covered]", []),
    _done("[covered-quote]", ["Order confirmed"]),
    _done("[same-colour]", []),
    _done("[drawn]", ["Settings saved", "Plan: Pro"]),
    _done("[drawn-not]", []),
    _done("[overlays]", ["Three orders placed"]),
]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CliRun]:
    folder = tmp_path_factory.mktemp("seen")
    manifest = folder / "qa.yml"
    manifest.write_text(textwrap.dedent(MANIFEST), encoding="utf-8")
    with SeenSite() as site, ScriptedLLM(SCENARIOS) as llm:
        yield preview_qa_run(manifest, site.url, folder / "out", llm, "--concurrency", "4")


def test_text_under_a_dialog_over_the_viewport_fails_naming_the_dialog(run: CliRun) -> None:
    t = run.test("covered text")
    assert t["status"] == "failed", t
    found = t["expectations"][0]["found"]
    assert found == "it is in the page, but no one can see it: covered by a dialog ('Your session has expired')", found
    quote = run.test("covered quote")
    assert quote["status"] == "failed", quote
    assert quote["quotes"] == [{"quote": "Order confirmed", "found": False, "where": None}]
    assert run.exit_code == 1


def test_text_the_colour_of_its_background_fails_as_unreadable(run: CliRun) -> None:
    t = run.test("same colour")
    assert t["status"] == "failed", t
    found = t["expectations"][0]["found"]
    assert found == "it is in the page, but no one can see it: unreadable, white on white (contrast 1.00:1)", found


def test_generated_content_and_a_closed_shadow_root_are_read_in_place(run: CliRun) -> None:
    t = run.test("drawn text")
    assert t["status"] == "passed", t
    found = {e["expected"]: (e["ok"], e["found"]) for e in t["expectations"]}
    assert found["visible text 'Settings saved'"] == (True, "it is visible")
    assert found["visible text 'Plan: Pro'"] == (True, "it is visible")
    assert found["no visible text 'Free'"] == (True, "it is not visible")
    assert t["quotes"] == [
        {"quote": "Settings saved", "found": True, "where": "at step 1, on /drawn"},
        {"quote": "Plan: Pro", "found": True, "where": "on the final page, in a closed shadow root"},
    ]


def test_not_text_sees_a_closed_shadow_root_too(run: CliRun) -> None:
    t = run.test("closed root not_text")
    assert t["status"] == "failed", t
    assert t["expectations"][0]["found"] == "it is visible in 'Plan: Pro' (a <acme-badge> element)", t["expectations"]


def test_a_sticky_header_a_cookie_banner_and_a_toast_hide_nothing_else(run: CliRun) -> None:
    t = run.test("overlays")
    assert t["status"] == "passed", t
    assert all(e["ok"] for e in t["expectations"]), t["expectations"]
