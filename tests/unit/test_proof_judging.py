"""--prove's judging rules (verdict/proof.py's judge_replay and judge, pure): a mutated replay that could not follow its
recording is judged by the test's checks on the page the app showed, only a failing check is a catch, and a catch by
checks that already held on the start page before the first action makes a test weak, never proven."""

from __future__ import annotations

import json
from typing import Any

from preview_qa.results import Execution, ExpectationOutcome, ProofVerdict
from preview_qa.verdict.agent_run import AgentRun, DoneReport
from preview_qa.verdict.proof import Mutation, MutationKind, Tried, held_before_only, judge, judge_replay, never_provable
from tests.builders import spec

SAVE_500 = Mutation(MutationKind.SERVER_ERROR, "POST", "/notes/new")
NOT_SAVED = Mutation(MutationKind.NOT_SAVED, "POST", "/notes/new")
DOCUMENT = Mutation(MutationKind.DOCUMENT_ERROR, "GET", "/notes/ada")
TEXT = Mutation(MutationKind.TEXT_REMOVED, texts=("Acme notes",))
DRIFT = "step 2: click button 'Save': the page went to http://x/notes/new, the recording went to http://x/notes/ada"


def check(kind: str, expected: str, ok: bool) -> ExpectationOutcome:
    return ExpectationOutcome(check=kind, expected=expected, found="it is visible" if ok else "not there", ok=ok)


HEADER = "visible text 'Acme notes'"
SAVED = "visible text 'Saved note: Ada'"
URL = "URL containing '/notes/'"


def replay(*checks: ExpectationOutcome, drift: str | None = DRIFT, **kw: Any) -> AgentRun:
    """A proof's replay that ended with these checks judged on its page (by default one that drifted)."""
    return AgentRun(execution=Execution.REPLAYED, expectations=list(checks), replay_error=drift, mutation_applied=True, **kw)


def test_a_drifted_replay_whose_checks_hold_on_the_page_it_reached_survived() -> None:
    tried = judge_replay(spec(expect={"url": "/notes/"}), SAVE_500, replay(check("url", URL, True)), None)
    assert tried.outcome == "passed" and not tried.caught
    assert tried.reason == (
        f"the replay could not follow its recording ({DRIFT}); the test's checks held on the page the app showed instead"
    )


def test_a_drifted_replay_is_caught_only_by_the_check_that_failed_and_says_which() -> None:
    tried = judge_replay(spec(expect={"text": "Saved note: Ada"}), SAVE_500, replay(check("text", SAVED, False)), None)
    assert tried.outcome == "failed" and tried.caught
    assert tried.reason.startswith(f"expectation text failed: expected {SAVED}, found not there")
    assert "(on the page the app showed when the replay could not follow its recording: step 2: click" in tried.reason


def test_a_drift_is_no_longer_a_catch_by_itself() -> None:
    """Before #45 any fall-back counted as caught; a drifted replay with no check to fail is not judged."""
    tried = judge_replay(spec(expect={"url": "/notes/"}), SAVE_500, replay(), None)
    assert tried.outcome == "errored" and not tried.caught


def test_the_page_check_decides_a_drifted_replay_of_a_test_without_page_checks() -> None:
    task_only = spec()
    said = lambda status: DoneReport(text=json.dumps({"status": status, "reason": "the note is not listed"}), success=None)  # noqa: E731
    failed = judge_replay(task_only, SAVE_500, replay(done=said("fail")), None)
    assert failed.outcome == "failed" and failed.caught and "agent: the note is not listed" in failed.reason
    held = judge_replay(task_only, SAVE_500, replay(done=said("pass")), None)
    assert held.outcome == "passed"
    unusable = judge_replay(task_only, SAVE_500, replay(done=None), None)
    assert unusable.outcome == "errored"  # no valid page-check answer: never counted as caught


def test_a_catch_by_a_check_that_held_before_the_first_action_is_marked_not_caught() -> None:
    before = [check("text", HEADER, True), check("text", SAVED, False)]
    tried = judge_replay(spec(expect={"text": "Acme notes"}), SAVE_500, replay(check("text", HEADER, False)), before)
    assert tried.outcome == "failed" and not tried.caught
    assert tried.held_before == ("visible text 'Acme notes' was on the page",)
    assert "found not there; but visible text 'Acme notes' was on the page before the first action (on the page" in tried.reason


def test_a_catch_counts_when_any_failed_check_did_not_hold_before() -> None:
    before = [check("text", HEADER, True), check("text", SAVED, False)]
    failed = [check("text", HEADER, False), check("text", SAVED, False)]
    assert held_before_only(failed, before) == ()
    assert held_before_only([check("text", HEADER, False)], before) != ()
    assert held_before_only([check("text", HEADER, False)], None) == ()  # unknown: the catch counts
    assert held_before_only([check("url", URL, False)], [check("url", URL, True)]) == (f"{URL} held",)


def test_an_absence_that_held_before_still_catches() -> None:
    """`not_text` holds on most start pages: its failing means the app showed what the test forbids."""
    error = check("not_text", "no visible text 'Could not save'", True)
    shown = check("not_text", "no visible text 'Could not save'", False)
    assert held_before_only([shown], [error]) == ()


def test_the_page_check_s_own_fail_is_a_catch_whatever_held_before() -> None:
    header_held = [check("text", HEADER, True)]
    said = DoneReport(text=json.dumps({"status": "fail", "reason": "no note"}), success=None)
    run = replay(check("text", HEADER, False), done=said, drift=None)
    tried = judge_replay(spec(expect={"text": "Acme notes", "data": {"x": "y"}}), SAVE_500, run, header_held)
    assert tried.caught


def test_a_test_caught_only_by_checks_that_held_before_is_weak() -> None:
    held = ("visible text 'Acme notes' was on the page",)
    tried = [Tried(m, "failed", "gone", held) for m in (SAVE_500, NOT_SAVED, DOCUMENT, TEXT)]
    proof = judge(tried)
    assert proof.verdict is ProofVerdict.WEAK
    assert proof.reason == (
        "visible text 'Acme notes' was on the page before its first action, and only that failed when POST /notes/new answers 500"
    )


def test_a_true_catch_after_a_held_one_proves_the_test() -> None:
    held = Tried(SAVE_500, "failed", "gone", ("visible text 'Acme notes' was on the page",))
    assert judge([held, Tried(NOT_SAVED, "failed", "saved text gone")]).verdict is ProofVerdict.PROVEN


def test_a_url_only_test_that_survives_every_drift_is_vacuous() -> None:
    survived = [Tried(m, "passed", "the checks held on the page the app showed instead") for m in (SAVE_500, NOT_SAVED, DOCUMENT)]
    proof = judge(survived)
    assert proof.verdict is ProofVerdict.VACUOUS and proof.reason == "passes even when POST /notes/new answers 500"


def test_surviving_a_save_and_failing_on_a_page_that_held_before_is_weak_and_names_what_it_survived() -> None:
    held = ("visible text 'Acme notes' was on the page",)
    proof = judge([Tried(SAVE_500, "passed", ""), Tried(TEXT, "failed", "gone", held)])
    assert proof.verdict is ProofVerdict.WEAK
    assert proof.reason.startswith("passes even when POST /notes/new answers 500; fails only when the expected text")


def test_a_read_after_the_save_that_the_mutated_replay_never_made_cannot_explain_a_survival() -> None:
    """A form that posts and redirects reads the saved page in its own run; a replay whose save answered 500 never
    got there, so its survival is the test's own: vacuous, not 'cannot tell apart'."""
    redirecting = Mutation(MutationKind.SERVER_ERROR, "POST", "/notes/new", read_after="GET /notes/ada")
    url_only = spec(expect={"url": "/notes/"})
    never_read = judge_replay(url_only, redirecting, replay(check("url", URL, True), read_after_made=False), None)
    assert judge([never_read]).verdict is ProofVerdict.VACUOUS
    read = judge_replay(url_only, redirecting, replay(check("url", URL, True), read_after_made=True), None)
    assert judge([read]).verdict is ProofVerdict.NOT_PROVEN


def test_a_test_whose_every_check_held_before_its_first_action_can_never_be_proven() -> None:
    header_only = spec(expect={"text": "Acme notes"})
    assert never_provable(header_only, [check("text", HEADER, True)])
    assert not never_provable(header_only, None)  # not known
    both = spec(expect={"text": ["Acme notes", "Saved note: Ada"]})
    assert not never_provable(both, [check("text", HEADER, True), check("text", SAVED, False)])
    absence = spec(expect={"not_text": "Could not save"})
    assert not never_provable(absence, [check("not_text", "no visible text 'Could not save'", True)])
    with_data = spec(expect={"text": "Acme notes", "data": {"title": "Ada"}})  # the page check judges it too
    assert not never_provable(with_data, [check("text", HEADER, True)])
