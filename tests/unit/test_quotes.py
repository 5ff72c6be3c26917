"""The agent's quotes, looked up in what the run's pages showed (verdict/quotes.py), and what a pass rests on: matching
folds case, spaces, punctuation and typography but never words; a quote no page showed fails a pass whatever its
checks say; a pass with neither a quote found nor a page check of its own is on the agent's word (unverified), and
every output says so; `--fail-on` takes several rules."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from preview_qa.config import FailOn, FailRules
from preview_qa.manifest.models import Expectations, TestSpec
from preview_qa.manifest.steps import StepKind
from preview_qa.reporters.artifacts import results_document
from preview_qa.reporters.github.commands import outputs
from preview_qa.reporters.github.markdown import render_markdown
from preview_qa.reporters.junit import render
from preview_qa.results import ExpectationOutcome, QuoteCheck, Status, StepExecution
from preview_qa.verdict.agent_run import AgentRun, DoneReport, StepRun
from preview_qa.verdict.decide import decide
from preview_qa.verdict.final import Facts, final_verdict
from preview_qa.verdict.quotes import PagesShown, ShownText, fold_quote, grounding, quoted_in
from preview_qa.verdict.steps import decide_test
from tests.builders import result, run_of, spec

ORDER = PagesShown(
    texts=[ShownText("Checkout\nPayment declined: your card was refused.", "at step 1, on /order")],
    final=["Checkout", "Payment declined: your card was refused."],
    read=True,
)
CHECKED = spec(expect={"text": ["Checkout"]})
UNCHECKED = spec(expect={"data": {"total": "3"}, "accessibility": {}})  # neither judges the page's text


@pytest.mark.parametrize(
    ("quote", "text"),
    [
        ("Signed in as: demo", "Signed in as demo"),
        ("signed in as demo", "SIGNED IN AS\u00a0DEMO"),
        ("“Order confirmed”", '"Order confirmed"'),
        ("Saved — 3 items…", "Saved - 3 items..."),
        ("Don’t panic", "Don't panic!"),
        ("$19.99", "Price: $19.99"),
        ("Hello, Ada!", "Output\nHello,   Ada!"),
    ],
)
def test_a_quote_is_found_whatever_its_case_spaces_punctuation_and_typography(quote: str, text: str) -> None:
    assert quoted_in(quote, text)


@pytest.mark.parametrize(
    ("quote", "text"),
    [
        ("Order confirmed", "Order not confirmed"),
        ("confirmed", "unconfirmed"),
        ("$19.99", "€19.99"),
        ("3 items", "13 items"),
        ("…", "…"),  # nothing left to find: no evidence
    ],
)
def test_a_quote_is_never_found_by_losing_or_splitting_words(quote: str, text: str) -> None:
    assert not quoted_in(quote, text)


WORDS = st.lists(st.from_regex(r"[A-Za-z0-9]{1,8}", fullmatch=True), min_size=1, max_size=12)


@given(WORDS, st.data())
def test_any_run_of_whole_words_of_a_text_is_found_in_it_however_it_is_punctuated(words: list[str], data: st.DataObject) -> None:
    start = data.draw(st.integers(0, len(words) - 1))
    end = data.draw(st.integers(start + 1, len(words)))
    between = st.sampled_from([" ", ", ", ": ", " — ", "\u00a0", "\n", "… "])
    marks = data.draw(st.lists(between, min_size=len(words), max_size=len(words)))
    shown = "".join(w + m for w, m in zip(words, marks, strict=True))
    assert quoted_in(" ".join(words[start:end]).upper(), shown)
    assert fold_quote(shown) == " ".join(w.casefold() for w in words)


def test_a_pass_with_a_quote_no_page_showed_fails_naming_it_and_what_the_final_page_shows() -> None:
    found = grounding(CHECKED, ["Payment declined", "Thank you for your order"], ORDER)
    assert found.failed == (
        "the agent cited 'Thank you for your order', which no page of this run showed; the final page shows "
        "'Checkout · Payment declined: your card was refused.'"
    )
    assert found.quotes == [
        QuoteCheck(quote="Payment declined", found=True, where="at step 1, on /order"),
        QuoteCheck(quote="Thank you for your order", found=False),
    ]


def test_a_quote_only_hidden_text_holds_fails_saying_why_no_one_sees_it_even_beside_a_picture() -> None:
    shown = PagesShown(ORDER.texts, ORDER.final, pictures=["a canvas in view at step 1, on /order"], read=True)
    found = grounding(CHECKED, ["Order confirmed"], shown, {"Order confirmed": "opacity 0 (on <p>)"})
    assert found.failed == (
        "the agent cited 'Order confirmed', which no page of this run showed where a person could see it: it is in "
        "the final page, but no one can see it: opacity 0 (on <p>)"
    )


def test_a_quote_a_picture_may_hold_or_that_was_not_kept_is_unverified_not_failed() -> None:
    pictured = PagesShown(ORDER.texts, ORDER.final, pictures=["a canvas in view at step 2, on /chart"], read=True)
    found = grounding(CHECKED, ["Revenue 42"], pictured)
    assert found.failed is None and found.unverified == (
        "on the agent's word: the agent cited 'Revenue 42', which no page of this run showed as text; it may have read "
        "it off a picture (a canvas in view at step 2, on /chart)"
    )
    cut = grounding(CHECKED, ["Revenue 42"], PagesShown(ORDER.texts, ORDER.final, read=True, complete=False))
    assert cut.failed is None and cut.unverified is not None and "more text showed than was kept" in cut.unverified
    unread = grounding(CHECKED, ["Payment declined"], PagesShown())
    assert unread.unverified == "on the agent's word: the run's pages could not be read to look its quotes up"


def test_a_pass_without_quotes_rests_on_its_page_checks_or_on_the_agent_s_word() -> None:
    assert grounding(CHECKED, [], ORDER) == grounding(CHECKED, ["Payment declined"], ORDER).__class__([], None, None)
    assert grounding(UNCHECKED, [], ORDER).unverified == (
        "on the agent's word: it quoted nothing from the page, and the test has no page check"
    )
    assert grounding(UNCHECKED, ["Payment declined", " "], ORDER).unverified is None  # a blank quote cites nothing


def run_with(report: dict[str, object], **kw: object) -> AgentRun:
    return AgentRun(done=DoneReport(text=json.dumps(report), success=True), shown=ORDER, **kw)  # type: ignore[arg-type]


def test_a_quote_no_page_showed_fails_a_pass_whose_checks_all_held() -> None:
    held = ExpectationOutcome(check="text", expected="visible text 'Checkout'", found="it is visible", ok=True)
    made_up = run_with({"status": "pass", "reason": "Order placed.", "quotes": ["Order placed"]}, expectations=[held])
    decision = decide(CHECKED, made_up)
    assert decision.verdict.status is Status.FAILED
    assert decision.verdict.reason.startswith("the agent cited 'Order placed', which no page of this run showed")
    assert decision.verdict.causes == ["the agent said pass: Order placed."]
    assert decision.unverified is None


def test_a_fail_keeps_its_own_reason_and_its_quotes_are_still_looked_up() -> None:
    failed = decide(UNCHECKED, run_with({"status": "fail", "reason": "Declined.", "quotes": ["Payment declined", "Nope"]}))
    assert (failed.verdict.status, failed.verdict.reason, failed.unverified) == (Status.FAILED, "agent: Declined.", None)
    assert [q.found for q in failed.quotes] == [True, False]


def test_only_a_pass_is_marked_unverified_and_a_pass_that_errors_later_loses_the_mark() -> None:
    word = run_with({"status": "pass", "reason": "Fine."})
    assert decide(spec(), word).unverified is not None
    saver = spec(save_state="login")
    final = final_verdict(Facts(saver, word, state_read=False))
    assert (final.verdict.status, final.decision.unverified) == (Status.ERRORED, None)


WORD = "on the agent's word: it quoted nothing from the page, and the test has no page check"


def test_every_output_says_a_pass_is_on_the_agent_s_word(tmp_path: Path) -> None:
    run = run_of(result("checked"), result("said so", unverified=WORD), result("failed", Status.FAILED, unverified=WORD))
    assert [t.name for t in run.unverified] == ["said so"]  # a failure is no pass on anyone's word
    assert results_document(run)["totals"]["unverified"] == 1
    assert "unverified<<" in outputs(run, tmp_path) and "\n1\n" in outputs(run, tmp_path).split("unverified<<", 1)[1]
    summary = render_markdown(run, str, None, 60_000)
    assert "· 1 on the agent's word (unverified)**" in summary and "**On the agent's word: 1**: said so" in summary
    assert run.tests[1].marks == [WORD] and run.tests[2].marks == []  # a failure's verdict says why it failed
    assert f'<property name="unverified" value="{WORD}"/>' in render(run.tests, run).decode()


def test_fail_on_takes_several_rules_and_unverified_is_one() -> None:
    run = run_of(result("checked"), result("said so", unverified=WORD))
    assert FailRules.parse("unverified").fails(run) and not FailRules.parse("failed").fails(run)
    rules = FailRules.parse(" vacuous , visual,unverified,visual")
    assert rules.rules == (FailOn.VACUOUS, FailOn.VISUAL, FailOn.UNVERIFIED) and str(rules) == "vacuous,visual,unverified"
    assert rules.fails(run) and FailOn.REGRESSIONS not in rules
    assert not FailRules.parse("vacuous,visual").fails(run)
    wrongs = (("never,failed", "'never' cannot be combined"), ("unverfied", "'unverfied' is not one of"), ("", "nothing"))
    for wrong, said in wrongs:
        with pytest.raises(ValueError, match=said):
            FailRules.parse(wrong)


def steps_run(*quotes: list[str]) -> AgentRun:
    """A test written as steps whose goals each pass quoting `quotes[i]`, on pages that showed ORDER."""
    goals = [
        StepRun(i, StepKind.DO, StepExecution.AGENT, run_with({"status": "pass", "reason": "Done.", "quotes": q}), finished=True)
        for i, q in enumerate(quotes, start=1)
    ]
    return AgentRun(step_runs=goals, shown=ORDER)


def test_a_goal_of_a_test_written_as_steps_is_grounded_like_a_task() -> None:
    spec = TestSpec.model_validate({"name": "buy", "steps": [{"do": "Pay"}, {"do": "Read the receipt"}]})
    made_up = decide_test(spec, steps_run(["Payment declined"], ["Receipt #42"]))
    assert made_up.verdict.status is Status.FAILED
    assert made_up.verdict.reason.startswith("step 2 of 2, 'Read the receipt': the agent cited 'Receipt #42'")
    assert [q.found for q in made_up.quotes] == [True, False]
    quoted = decide_test(spec, steps_run(["Payment declined"], []))  # the second goal quotes nothing, nothing checks
    assert quoted.verdict.status is Status.PASSED and quoted.unverified is not None
    checked = spec.model_copy(update={"expect": Expectations(text=["Checkout"])})
    assert decide_test(checked, steps_run(["Payment declined"], [])).unverified is None  # a check grounds the test
