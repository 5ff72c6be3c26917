"""End to end: a step whose click is answered over the WebSocket the page opened at load (tests/site/answered.py)
settles only once the answer has arrived and been drawn, so the agent's next step is shown the answer: acknowledged at
once and answered a second later, as a Panel app's async callback is (before, 4 runs of 5 of that app's next step were
shown the stale page), or answered alone 2.5 s later, which every step's settle waits for and names; a ticker socket
the page acknowledges tick by tick never holds a step's settle as an awaited answer."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import CliRun, scripted_run
from tests.site import DemoSite
from tests.site.answered import ANSWER

pytestmark = pytest.mark.e2e

ORDERS = {"order 1": "/answered/order", "order 2": "/answered/order", "slow order": "/answered/order?ms=2500&ack=0"}
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
"""
)
DONE = {"done": {"status": "pass", "reason": "Done."}}


@pytest.fixture(scope="module")
def answered(tmp_path_factory: pytest.TempPathFactory, site: DemoSite) -> Iterator[CliRun]:
    order = {"turns": [{"actions": [{"click": {"element": "Place order"}}]}, DONE]}
    scenarios = [{"match": f"[{name}]", **order} for name in ORDERS]
    scenarios.append({"match": "[ticker]", "turns": [{"actions": [{"click": {"element": "Note it"}}]}, DONE]})
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


def test_a_ticker_acknowledged_tick_by_tick_does_not_hold_the_steps_settle(answered: CliRun) -> None:
    settled = _first_step(answered, "ticker")["settled"]  # a ticker right after the load may be judged restless, as before
    assert "the answer on WebSocket" not in settled, settled
    assert "Noted at" in _page_seen(answered, "ticker", 2)
