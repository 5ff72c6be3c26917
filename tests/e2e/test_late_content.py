"""End to end: pages whose content arrives after the load event with no HTTP request of its own
(tests/site/late.py). An agent that says at once "no 'Say hello' button" with `not_text: [Say hello]` must
fail where the button is drawn from a WebSocket message or by a timer (a false pass before settling watched the page
draw), and the agent's first step sees the drawn page; a page whose content never arrives fails its absence with a
reason saying so; a page that never stops changing is judged at the bound, and its settled event says why."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import CliRun, scripted_run
from tests.site import DemoSite

pytestmark = pytest.mark.e2e

PASS_AT_ONCE = {"done": {"status": "pass", "reason": "No 'Say hello' button is shown."}}
MANIFEST = """version: 1
defaults: {max_steps: 3, timeout: 90}
tests:
  - name: over a socket
    task: "[over a socket] Check that no 'Say hello' button is shown."
    start: /late/socket
    expect: {not_text: [Say hello]}
  - name: by a timer
    task: "[by a timer] Check that no 'Say hello' button is shown."
    start: /late/timer
    expect: {not_text: [Say hello]}
  - name: never drawn
    task: "[never drawn] Check that no 'Say hello' button is shown."
    start: /late/never
    expect: {not_text: [Say hello], timeout: 2}
  - name: a clock
    task: "[a clock] Check that the 'Say hello' button is shown."
    start: /late/clock
    expect: {text: [Say hello], timeout: 2}
"""
NAMES = ("over a socket", "by a timer", "never drawn", "a clock")


@pytest.fixture(scope="module")
def late(tmp_path_factory: pytest.TempPathFactory, site: DemoSite) -> Iterator[CliRun]:
    scenarios = [{"match": f"[{name}]", "turns": [PASS_AT_ONCE]} for name in NAMES]
    with scripted_run(tmp_path_factory.mktemp("late"), site, MANIFEST, scenarios, "--concurrency", "2") as run:
        yield run


def _settled(run: CliRun, name: str) -> dict[str, Any]:
    events = (run.out / run.test(name)["artifacts"]["events"]).read_text(encoding="utf-8").splitlines()
    return next(e for e in map(json.loads, events) if e["type"] == "settled")


def _first_request(run: CliRun, name: str) -> str:
    assert run.llm is not None
    return next(text for text in map(json.dumps, run.llm.requests) if f"[{name}]" in text)


@pytest.mark.parametrize("name", ["over a socket", "by a timer"])
def test_an_absence_fails_on_content_drawn_after_the_load_without_a_request(late: CliRun, name: str) -> None:
    t = late.test(name)
    assert t["status"] == "failed", t
    assert "no visible text 'Say hello'" in t["reason"] and "it is visible" in t["reason"], t["reason"]
    assert late.exit_code == 1


@pytest.mark.parametrize("name", ["over a socket", "by a timer"])
def test_the_agents_first_step_sees_the_drawn_page(late: CliRun, name: str) -> None:
    assert "Say hello" in _first_request(late, name)


def test_an_absence_on_a_page_whose_content_never_arrives_fails_and_says_so(late: CliRun) -> None:
    t = late.test("never drawn")
    assert t["status"] == "failed", t
    assert "the app never rendered" in t["reason"] and "its content never rendered" in t["reason"], t["reason"]
    settled = _settled(late, "never drawn")
    assert (settled["outcome"], settled["rendered"]) == ("bound reached", False), settled


def test_a_page_that_never_stops_changing_is_judged_at_the_bound_and_says_so(late: CliRun) -> None:
    t = late.test("a clock")
    assert t["status"] == "passed", t
    settled = _settled(late, "a clock")
    assert settled["outcome"] == "bound reached" and settled["waited_for"] == ["the page's drawing"], settled
    assert settled["summary"].endswith("judged the page as it was at the bound: it never stopped changing"), settled
