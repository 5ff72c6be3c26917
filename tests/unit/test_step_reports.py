"""Which step broke, where a reviewer reads it (issue #47): the failure card of a test written as steps lists its test
steps ("step 2 of 4 'Open the cart'") with the failing one marked and pictured, and its agent steps as "agent step 5";
JUnit's body, the PR comment (as cmark-gfm renders it) and report.html say the same; a task's card is as before."""

from __future__ import annotations

import html
import re
from pathlib import Path

import cmarkgfm

from preview_qa.engine.visual import outcome
from preview_qa.events import RunFinished
from preview_qa.manifest.models import TestSpec
from preview_qa.reporters.github.markdown import render_markdown
from preview_qa.reporters.html import HtmlReporter
from preview_qa.reporters.junit import render
from preview_qa.reporters.output.card import card_text, failure_card
from preview_qa.results import (
    ExpectationOutcome,
    Status,
    StepExecution,
    StepInWords,
    StepResult,
    StepStatus,
    TestResult,
)
from tests.builders import plain_png, result, run_of

FOLDER = "tests/checkout-1a2b3c4d"
CHECK = ExpectationOutcome(check="step 2 text", expected="visible text 'Cart: 1 item'", found="'Cart: 0 items'", ok=False)
REASON = "step 2 of 4, 'Open the cart': expectation text failed: expected visible text 'Cart: 1 item', found 'Cart: 0 items'"


def checkout() -> TestResult:
    steps = [
        StepResult(index=1, name="Add the anvil", kind="do", status=StepStatus.PASSED, execution=StepExecution.REPLAY,
                   agent_steps=(1, 3), screenshot=f"{FOLDER}/test-step-1.png"),
        StepResult(index=2, name="Open the cart", kind="open", status=StepStatus.FAILED, execution=StepExecution.EXACT,
                   reason=REASON.split(": ", 1)[1], screenshot=f"{FOLDER}/test-step-2.png"),
        StepResult(index=3, name="Fill the coupon", kind="fill", status=StepStatus.NOT_RUN),
        StepResult(index=4, name="Pay", kind="do", status=StepStatus.NOT_RUN),
    ]  # fmt: skip
    agent_steps = [
        StepInWords(number=n, actions=[f"Clicked button 'Add {n}'"], page="http://x/shop", screenshot=f"{FOLDER}/step-0{n}.png")
        for n in (1, 2, 3)
    ]
    return result(
        "checkout",
        Status.FAILED,
        REASON,
        expectations=[CHECK],
        step_results=steps,
        steps=3,
        steps_in_words=agent_steps,
        artifacts={"final_screenshot": f"{FOLDER}/final.png"},
    )


def test_the_card_names_the_step_that_broke_once_and_pictures_it() -> None:
    card = failure_card(checkout(), "http://x")
    assert card.headline == "step 2 of 4 'Open the cart': 1 expectation(s) failed once its page had settled"
    assert [(s.words, s.outcome, s.failed) for s in card.test_steps] == [
        ("step 1 of 4 'Add the anvil'", "passed (replay, agent steps 1-3)", False),
        ("step 2 of 4 'Open the cart'", "failed (exact)", True),
        ("step 3 of 4 'Fill the coupon'", "not run", False),
        ("step 4 of 4 'Pay'", "not run", False),
    ]
    assert card.screenshots == [("test-step-2.png", "step 2 of 4 'Open the cart'")]  # not final.png: the step's page
    assert not any(s.went_wrong for s in card.steps)  # the agent's steps all went as they should


def test_junits_body_tells_test_steps_and_agent_steps_apart(tmp_path: Path) -> None:
    text = card_text(failure_card(checkout(), "http://x"))
    assert "Test steps:\n- step 1 of 4 'Add the anvil': passed (replay, agent steps 1-3)\n" in text
    assert "- step 2 of 4 'Open the cart': failed (exact)   ← failed here\n" in text
    assert "Agent steps:\nagent step 1. Clicked button 'Add 1' → /shop\nagent step 2. " in text
    xml = render([checkout()], run_of(checkout()), tmp_path).decode()
    assert html.escape("step 2 of 4 'Open the cart': failed (exact)", quote=False) in xml.replace("&apos;", "'")


def test_the_pr_comment_renders_the_steps_as_a_reviewer_reads_them() -> None:
    body = render_markdown(run_of(checkout()), str, None, 60_000)
    page = cmarkgfm.github_flavored_markdown_to_html(body)
    assert "<li>❌ <strong>step 2 of 4 'Open the cart'</strong>: failed (exact)</li>" in html.unescape(page)
    assert "<li>agent step 1: Clicked button 'Add 1' → /shop</li>" in html.unescape(page)
    assert "<ol" not in page.split("Test steps:")[1]  # agent steps as a list of "agent step N", never renumbered
    assert "| Agent steps |" in body


def test_a_tasks_card_reads_as_before() -> None:
    task = result("login", Status.FAILED, "agent: no dashboard", steps=1, steps_in_words=[StepInWords(number=1)])
    task = task.model_copy(update={"step_results": [StepResult(index=1, name="Log in", kind="do", status=StepStatus.FAILED)]})
    text = card_text(failure_card(task))
    assert "Steps:\n1. Did nothing   ← went wrong" in text and "step 1 of 1" not in text and "agent step" not in text


def test_the_report_lists_the_test_steps_with_their_pictures(tmp_path: Path) -> None:
    reporter = HtmlReporter(tmp_path)
    reporter.handle(RunFinished(result=run_of(checkout())))
    page = html.unescape((tmp_path / "report.html").read_text(encoding="utf-8"))
    assert "<h3>Test steps</h3>" in page and "<h3>Agent steps</h3>" not in page  # no agent step file on disk here
    assert re.search(r"<strong>step 2 of 4 'Open the cart'</strong>: <span class=\"badge failed\">failed</span>", page)
    assert "step 4 of 4 'Pay'" in page and ">not run<" in page


def test_a_visual_comparison_per_test_step_is_labelled_with_that_step() -> None:
    spec = TestSpec.model_validate(
        {
            "name": "checkout",
            "steps": [{"do": "Add the anvil"}, {"open": "/cart", "name": "Open the cart"}],
            "expect": {"visual": {"steps": True}},
        }
    )
    shots = {"1": plain_png(), "2": plain_png(), "final": plain_png()}
    compared, _ = outcome(spec, result("checkout"), shots, shots, [], "")
    assert [v.where() for v in compared.visual] == [
        "step 1 of 2 'Add the anvil'",
        "step 2 of 2 'Open the cart'",
        "the final page",
    ]
