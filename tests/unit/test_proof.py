"""--prove's pure half (verdict/proof.py): which mutations a passing test's own run leads to, behavioural first and at
most four, and what the outcomes under them say about the test."""

from __future__ import annotations

from preview_qa.manifest.models import Expectations
from preview_qa.results import ProofVerdict
from preview_qa.verdict.agent_run import SeenRequest
from preview_qa.verdict.proof import (
    MAX_MUTATIONS,
    Mutation,
    MutationKind,
    ProofRun,
    Tried,
    choose_mutations,
    expected_texts,
    judge,
)

ORIGIN = "http://preview.test"
START = SeenRequest("GET", f"{ORIGIN}/settings", "document", None, 200)
SCRIPT = SeenRequest("GET", f"{ORIGIN}/app.js", "script", None, 200)
SAVE = SeenRequest(
    "POST", f"{ORIGIN}/api/settings?token=s3cret", "fetch", "'Save'", 200, {"content-type": "application/json"}, b"{}"
)


def names(mutations: list[Mutation]) -> list[str]:
    return [m.name for m in mutations]


def test_a_save_is_broken_twice_first_then_the_page() -> None:
    chosen = choose_mutations([START, SCRIPT, SAVE], ["Saved display name: Grace"])
    assert names(chosen) == [
        "POST /api/settings answers 500",
        "POST /api/settings answers 200 with an empty body and saves nothing",
        "the expected text 'Saved display name: Grace' is removed from the pages",
    ]
    assert all("s3cret" not in name for name in names(chosen))  # never the query: it may hold a secret


def test_non_gets_come_before_the_app_s_gets_and_the_cap_holds() -> None:
    load = SeenRequest("GET", f"{ORIGIN}/api/orders", "xhr", "'Refresh'", 200)
    image = SeenRequest("GET", f"{ORIGIN}/logo.png", "image", "'Refresh'", 200)
    delete = SeenRequest("DELETE", f"{ORIGIN}/api/orders/1", "fetch", "'Delete'", 204)
    chosen = choose_mutations([START, load, image, SAVE, delete, load], ["Deleted"])
    assert len(chosen) == MAX_MUTATIONS
    assert all(m.behavioural for m in chosen)
    assert [(m.kind, m.method) for m in chosen] == [
        (MutationKind.SERVER_ERROR, "POST"),
        (MutationKind.NOT_SAVED, "POST"),
        (MutationKind.SERVER_ERROR, "DELETE"),
        (MutationKind.NOT_SAVED, "DELETE"),
    ]
    reads = choose_mutations([START, load, image, load], [])
    assert names(reads) == ["GET /api/orders answers 500"]  # once, and never the image


def test_requests_before_any_action_are_not_the_test_s_to_break() -> None:
    analytics = SeenRequest("POST", f"{ORIGIN}/collect", "fetch", None, 204)
    assert choose_mutations([START, analytics], []) == []


def test_the_final_document_answers_500_only_when_an_action_led_to_it() -> None:
    login = SeenRequest("POST", f"{ORIGIN}/login", "document", "'Log in'", 303, {"location": "/dashboard"})
    dashboard = SeenRequest("GET", f"{ORIGIN}/dashboard", "document", "'Log in'", 200)
    chosen = choose_mutations([START, login, dashboard], [])
    assert names(chosen)[-1] == "the final document GET /dashboard answers 500"
    assert not any(m.kind is MutationKind.DOCUMENT_ERROR for m in choose_mutations([START], ["x"]))


def test_a_read_after_a_write_is_noted_on_its_mutations() -> None:
    reread = SeenRequest("GET", f"{ORIGIN}/api/settings", "fetch", "'Save'", 200)
    chosen = choose_mutations([START, SAVE, reread], [])
    assert chosen[0].read_after == "GET /api/settings" and chosen[1].read_after == "GET /api/settings"
    assert choose_mutations([START, SAVE], [])[0].read_after is None


def test_the_expected_texts_include_the_data_the_test_wants() -> None:
    assert expected_texts(["Thanks"], {"price": " $19.99 ", "count": 3}) == ["Thanks", "$19.99"]


def test_a_text_that_appeared_on_the_way_is_cut_by_the_text_removal_too() -> None:
    expect = Expectations(text=["Profile"], appeared=["Saved!"], not_appeared=["Conflict"])
    removal = choose_mutations([START, SAVE], expected_texts(expect.shown_texts, {}))[-1]
    assert (removal.kind, removal.texts) == (MutationKind.TEXT_REMOVED, ("Profile", "Saved!"))


def test_a_proof_replay_is_answered_with_the_own_run_s_answers_in_turn() -> None:
    second = SeenRequest(SAVE.method, SAVE.url, "fetch", "'Save'", 201, {}, b"second")
    proof = ProofRun(Mutation(MutationKind.TEXT_REMOVED, texts=("x",)), (START, SAVE, second))
    assert proof.answer("POST", SAVE.url, 0) is SAVE
    assert proof.answer("POST", SAVE.url, 1) is second
    assert proof.answer("POST", SAVE.url, 5) is second
    assert proof.answer("PUT", SAVE.url, 0) is None


SERVER_ERROR = Mutation(MutationKind.SERVER_ERROR, "POST", "/api/settings")
NOT_SAVED = Mutation(MutationKind.NOT_SAVED, "POST", "/api/settings")
DOCUMENT = Mutation(MutationKind.DOCUMENT_ERROR, "GET", "/done")
TEXT = Mutation(MutationKind.TEXT_REMOVED, texts=("Saved",))


def test_a_test_that_fails_when_the_save_breaks_is_proven() -> None:
    proof = judge([Tried(SERVER_ERROR, "failed", "no text"), Tried(NOT_SAVED, "passed", ""), Tried(TEXT, "passed", "")])
    assert proof.verdict is ProofVerdict.PROVEN
    assert proof.reason == "it fails when POST /api/settings answers 500"
    assert (proof.mutations[0].name, proof.mutations[0].outcome) == ("POST /api/settings answers 500", "failed")


def test_a_test_that_survives_every_behavioural_mutation_is_vacuous() -> None:
    proof = judge([Tried(SERVER_ERROR, "passed", ""), Tried(NOT_SAVED, "passed", ""), Tried(DOCUMENT, "errored", "x")])
    assert proof.verdict is ProofVerdict.VACUOUS
    assert proof.reason == "passes even when POST /api/settings answers 500"


def test_a_test_that_fails_only_when_its_page_breaks_is_weak() -> None:
    proof = judge([Tried(SERVER_ERROR, "passed", ""), Tried(NOT_SAVED, "passed", ""), Tried(TEXT, "failed", "gone")])
    assert proof.verdict is ProofVerdict.WEAK
    assert "fails only when the expected text 'Saved' is removed" in proof.reason


def test_a_survival_that_a_read_after_the_save_explains_is_not_proven_not_vacuous() -> None:
    reread = Mutation(MutationKind.NOT_SAVED, "POST", "/api/settings", read_after="GET /api/settings")
    proof = judge([Tried(reread, "passed", ""), Tried(TEXT, "failed", "gone")])
    assert proof.verdict is ProofVerdict.NOT_PROVEN
    assert "GET /api/settings after it reads what the test's own run already saved" in proof.reason


def test_an_unjudged_replay_never_counts_as_caught() -> None:
    proof = judge([Tried(SERVER_ERROR, "errored", "timed out"), Tried(NOT_SAVED, "passed", "")])
    assert proof.verdict is ProofVerdict.NOT_PROVEN
    assert "timed out" in proof.reason


def test_a_test_whose_actions_send_nothing_is_proven_by_its_page() -> None:
    assert judge([Tried(TEXT, "failed", "gone")]).verdict is ProofVerdict.PROVEN
    assert judge([Tried(TEXT, "passed", "")]).verdict is ProofVerdict.VACUOUS
    assert judge([]).verdict is ProofVerdict.NOT_PROVEN


def test_no_outcome_after_the_first_caught_mutation_changes_the_verdict() -> None:
    """Why a proof stops at the first mutation that fails the test (engine/proof.py): behavioural ones come first."""
    orders = [[SERVER_ERROR, NOT_SAVED, TEXT], [TEXT]]
    for mutations in orders:
        for caught in range(len(mutations)):
            head = [Tried(m, "passed", "") for m in mutations[:caught]] + [Tried(mutations[caught], "failed", "x")]
            for rest in ("passed", "failed"):
                tail = [Tried(m, rest, "") for m in mutations[caught + 1 :]]  # type: ignore[arg-type]
                assert judge(head).verdict is judge(head + tail).verdict


def test_a_mutation_that_met_no_request_proves_nothing_either_way() -> None:
    unmet = Tried(TEXT, "not_applied", TEXT.unmet)
    assert judge([Tried(SERVER_ERROR, "passed", ""), unmet]).verdict is ProofVerdict.VACUOUS  # the met one decides
    alone = judge([unmet])
    assert alone.verdict is ProofVerdict.NOT_PROVEN and "no document or response of the replay carried" in alone.reason
    assert alone.mutations[0].outcome == "not_applied"  # listed, not dropped
