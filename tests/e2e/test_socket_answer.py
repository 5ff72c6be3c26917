"""End to end: a step whose click is answered over the WebSocket the page opened at load (tests/site/answered.py)
settles only once the answer has arrived and been drawn, so the agent's next step is shown the answer: acknowledged at
once and answered a second later, as a Panel app's async callback is (before, 4 runs of 5 of that app's next step were
shown the stale page), or answered alone 2.5 s later, which every step's settle waits for and names; a ticker socket
the page acknowledges tick by tick never holds a step's settle as an awaited answer. A shop drawn only inside open
shadow roots (Bokeh's way) is watched there: its next step is shown the answer, and a toast its answer shows for a
moment inside a shadow root is seen by `appeared`; a settle sees such a page draw where it first looked at it blank."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterator
from typing import Any

import pytest

from preview_qa.agent.browsers.chromium import find_chromium
from preview_qa.agent.page.quiet import Settling
from preview_qa.agent.page.settle import PageSettler, Settled
from tests.conftest import CliRun, scripted_run
from tests.site import DemoSite
from tests.site.answered import ANSWER

pytestmark = pytest.mark.e2e

ORDERS = {
    "order 1": "/answered/order",
    "order 2": "/answered/order",
    "slow order": "/answered/order?ms=2500&ack=0",
    "shadow order": "/answered/shadow",  # drawn only inside open shadow roots, as Bokeh draws Panel's widgets
}
MANIFEST = (
    "version: 1\ndefaults: {max_steps: 3, timeout: 120}\ntests:\n"
    + "".join(
        f"""  - name: {name}
    task: "[{name}] Place an order and check that it was placed."
    start: {start}
    expect: {{text: ["{ANSWER}"]}}
"""
        for name, start in ORDERS.items()
    )
    + """  - name: ticker
    task: "[ticker] Note the price."
    start: /answered/ticker
    expect: {text: [Noted at]}
  - name: shadow toast
    task: "[shadow toast] Place an order and check that it says it was placed."
    start: /answered/shadow?ms=3000&ack=0&toast=300
    expect: {appeared: ["Order #1042 placed"]}
"""
)
DONE = {"done": {"status": "pass", "reason": "Done."}}
WIDE = 15.0  # a bound the settle of a drawn page stays far below: reaching it is what the shadow-root test tells apart


@pytest.fixture(scope="module")
def answered(tmp_path_factory: pytest.TempPathFactory, site: DemoSite) -> Iterator[CliRun]:
    order = {"turns": [{"actions": [{"click": {"element": "Place order"}}]}, DONE]}
    scenarios = [{"match": f"[{name}]", **order} for name in ORDERS]
    scenarios.append({"match": "[ticker]", "turns": [{"actions": [{"click": {"element": "Note it"}}]}, DONE]})
    scenarios.append({"match": "[shadow toast]", **order})
    with scripted_run(tmp_path_factory.mktemp("answered"), site, MANIFEST, scenarios, "--concurrency", "2") as run:
        yield run


def _page_seen(run: CliRun, name: str, step: int) -> str:
    """The page as the agent's `step` was shown it: the <browser_state> of the request the scripted LLM got for it."""
    assert run.llm is not None
    text = next(t for t in map(json.dumps, run.llm.requests) if f"[{name}]" in t and f"<step_info>Step{step} max" in t)
    start = text.rfind("<browser_state>")  # the system prompt names the tag first
    return text[start : text.find("</browser_state>", start)]


def _first_step(run: CliRun, name: str) -> dict[str, Any]:
    events = (run.out / run.test(name)["artifacts"]["events"]).read_text(encoding="utf-8").splitlines()
    return next(e for e in map(json.loads, events) if e["type"] == "step" and e["number"] == 1)


def test_every_test_passed(answered: CliRun) -> None:
    statuses = {t["name"]: t["status"] for t in answered.results["tests"]}
    assert set(statuses.values()) == {"passed"}, answered.stdout + answered.stderr
    assert answered.exit_code == 0


@pytest.mark.parametrize("name", ORDERS)
def test_the_next_step_is_shown_the_answer_to_the_click(answered: CliRun, name: str) -> None:
    assert "No order yet" in _page_seen(answered, name, 1)
    assert ANSWER in _page_seen(answered, name, 2)


def test_the_steps_settle_waited_for_the_answer_and_says_so(answered: CliRun) -> None:
    settled = _first_step(answered, "slow order")["settled"]
    assert "the answer on WebSocket /answered/orders" in settled and "bound" not in settled, settled


def test_a_toast_drawn_inside_a_shadow_root_is_seen_to_appear(answered: CliRun) -> None:
    """The click's answer, 3 s later (after browser-use's click highlight has gone), a toast in a root made with the
    shop's view (inside the root of a host upgraded in the page), shown 0.3 s, so gone before the step's settle ends
    (quiet 0.5 s after it went) and the checks look: a watch of that root sees it. Before, only a look every 0.5 s that
    went on after browser-use's click highlight could: `appeared` failed 3 runs of 9 (a regression fails it that often)."""
    toast = answered.test("shadow toast")
    assert (toast["status"], toast["expectations"][0]["ok"]) == ("passed", True), toast
    assert toast["expectations"][0]["found"].startswith("it was visible "), toast["expectations"]


def test_a_ticker_acknowledged_tick_by_tick_does_not_hold_the_steps_settle(answered: CliRun) -> None:
    settled = _first_step(answered, "ticker")["settled"]  # a ticker right after the load may be judged restless, as before
    assert "the answer on WebSocket" not in settled, settled
    assert "Noted at" in _page_seen(answered, "ticker", 2)


def test_a_settle_sees_a_page_draw_inside_a_shadow_root_it_already_holds(site: DemoSite) -> None:
    """The shop drawn, when the test says so, inside the shadow root of a host upgraded before the settle first looked
    (nothing changes outside the roots): the settle sees it drawn and judges the page rendered. Before, it never looked
    again and waited out its bound, saying the content never rendered."""
    from playwright.async_api import async_playwright

    async def main() -> tuple[Settled, Settled]:
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=find_chromium(None, os.environ))
            page, settler = await browser.new_page(), PageSettler()
            settler.attach(page.context)  # before the page loads: the settle's watch is installed in each new document
            await page.goto(site.url + "/answered/shadow?held", wait_until="load")
            blank = await settler.settle(page, 4.0)  # looks at the page before it draws (its socket's session: 3 s)
            await page.evaluate("draw()")
            drawn = await settler.settle(page, WIDE)
            await browser.close()
            return blank, drawn

    blank, drawn = asyncio.run(main())
    assert (blank.outcome, blank.rendered) == (Settling.BOUND_REACHED, False), blank.line()
    assert (drawn.outcome, drawn.rendered) == (Settling.SETTLED, True), drawn.line()
