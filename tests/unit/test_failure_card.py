"""The failure card's facts, said once, from the result alone; the actions in words; JUnit's body is the same card."""

from __future__ import annotations

from pathlib import Path

import pytest

from preview_qa.reporters.junit import render
from preview_qa.reporters.output.card import card_text, failure_card
from preview_qa.reporters.output.steps import describe_action
from preview_qa.results import EvidenceSummary, ExpectationOutcome, OtherRun, Status, StepInWords, check_line
from tests.builders import result, run_of

CHECK = ExpectationOutcome(
    check="url", expected="a URL matching /thanks", found="http://x/pay", ok=False, timeout_s=5, waited_s=5
)
STEPS = [
    StepInWords(number=1, actions=["Clicked button 'Pay now'"], page="http://x/pay", screenshot="tests/t/step-01.png"),
    StepInWords(number=2, actions=["Waited 1 s"], page="http://x/pay", error="element gone", screenshot="tests/t/step-02.png"),
    StepInWords(number=3, actions=["Reported: pass"], page="http://other.example/x"),
]


@pytest.mark.parametrize(
    ("action", "element", "words"),
    [
        ({"click": {"index": 23}}, {"role": "button", "name": "Pay now"}, "Clicked button 'Pay now'"),
        ({"click": {"index": 2}}, None, "Clicked an unnamed element"),
        (
            {"input": {"index": 3, "text": "demo@acme.test", "clear": True}},
            {"role": "textbox", "name": "Email"},
            "Typed 'demo@acme.test' into textbox 'Email'",
        ),
        ({"wait": {"seconds": 1}}, None, "Waited 1 s"),
        ({"scroll": {"down": False, "pages": 2}}, None, "Scrolled up 2 page(s)"),
        ({"navigate": {"url": "http://x/cart", "new_tab": False}}, None, "Opened 'http://x/cart'"),
        ({"done": {"success": True, "data": {"status": "fail", "reason": "r"}, "files_to_display": []}}, None, "Reported: fail"),
        ({"done": {"success": False, "text": "gave up"}}, None, "Reported: could not finish"),
        (
            {"made_up": {"index": 4, "depth": 3, "nested": {"a": 1}}},
            {"role": "link", "name": "Help"},
            "Ran made up link 'Help' (depth 3)",
        ),
    ],
)
def test_each_action_is_told_in_words_without_json_or_index(action: dict, element: dict | None, words: str) -> None:
    line = describe_action(action, element)
    assert line.text == words
    assert "{" not in line.text and "index" not in line.text


def test_a_failed_check_is_in_the_table_once_and_the_headline_says_how_many() -> None:
    test = result(
        "t",
        Status.FAILED,
        check_line(CHECK),
        expectations=[CHECK],
        causes=["the agent said pass: looks fine"],
        agent_report={"status": "pass", "reason": "looks fine"},
    )
    card = failure_card(test)
    assert card.headline == "1 expectation(s) failed on the final page"
    assert [(c.check, c.found, c.waited) for c in card.checks] == [("url", "http://x/pay", "5.0 s")]
    assert card.agent == "The agent reported pass: looks fine" and card.causes == []  # the agent's cause, once


def test_the_agents_failing_report_is_the_headline_not_a_second_line() -> None:
    test = result(
        "t",
        Status.FAILED,
        "agent: no confirmation",
        agent_report={"status": "fail", "reason": "no confirmation"},
        causes=["the page threw an uncaught exception: boom (2 more in events.jsonl)", "a request failed: GET /a"],
        evidence=EvidenceSummary(
            page_errors=3,
            failed_requests=1,
            console_errors=4,
            first_page_error="boom",
            first_failed_request="GET /a",
            first_console_error="oops",
        ),
    )
    card = failure_card(test)
    assert card.headline == "agent: no confirmation" and card.agent is None and card.causes == []
    assert card.evidence == ["Page error: boom", "Failed request: GET /a", "Console error: oops"]
    assert card.evidence_more == 5


def test_the_step_that_went_wrong_is_marked_and_its_screenshot_named() -> None:
    test = result(
        "t",
        Status.FAILED,
        "agent: x",
        steps_in_words=STEPS,
        replay_drift="replay drifted at step 2: gone",
        artifacts={"replay_drift_live": "tests/t/replay-drift-live.png"},
    )
    card = failure_card(test, "http://x")
    assert [(s.number, s.page, s.went_wrong) for s in card.steps] == [
        (1, "/pay", False),
        (2, "", True),
        (3, "http://other.example/x", False),
    ]  # a page only when it changed
    assert card.folder == "tests/t"
    assert card.screenshots == [("step-02.png", "step 2"), ("replay-drift-live.png", "the step as it is now")]
    assert card.drift == "replay drifted at step 2: gone"


def test_junits_failure_body_is_the_card_as_plain_text(tmp_path: Path) -> None:
    test = result(
        "t",
        Status.FAILED,
        "agent: no confirmation",
        steps_in_words=STEPS,
        agent_report={"status": "fail", "reason": "no confirmation"},
        expectations=[CHECK],
        earlier_attempts=[OtherRun(status=Status.ERRORED, reason="crashed")],
        attempts=2,
    )
    xml = render([test], run_of(test, base_url="http://x")).decode()
    body = failure_card(test, "http://x")
    assert card_text(body) in xml.replace("&gt;", ">").replace("&lt;", "<").replace("&#x27;", "'").replace("&apos;", "'")
    assert "Attempt 1 of 2: errored: crashed" in xml and "2. Waited 1 s   ← went wrong" in xml
    assert "{'status'" not in xml and "Agent's own verdict" not in xml
