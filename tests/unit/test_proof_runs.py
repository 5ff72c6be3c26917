"""--prove through the real runner with a stand-in agent (engine/proof.py): a catch by checks that held before the first
action does not end a proof while another check may still catch (it does when every check held there), and a proof
replay that needs the page check's LLM call is not made past the test's or the run's token budget: it is listed, never
dropped."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from preview_qa.engine.agent_port import AgentRequest, Recording
from preview_qa.results import Execution, ExpectationOutcome, ProofVerdict, TestResult, Usage
from preview_qa.verdict.agent_run import AgentRun, DoneReport, SeenRequest
from tests.builders import PASS, run, specs_named

ORIGIN = "http://preview.test"
RECORDING = Recording(origin=ORIGIN, history={"history": []})
OWN_REQUESTS = [
    SeenRequest("GET", f"{ORIGIN}/notes/new", "document", None, 200),
    SeenRequest("POST", f"{ORIGIN}/notes/new", "document", "'Save'", 303, {"location": "/notes/ada"}),
    SeenRequest("GET", f"{ORIGIN}/notes/ada", "document", "'Save'", 200),
]
HEADER = "visible text 'Acme notes'"
DRIFT = "step 2: click button 'Save': the page went to http://preview.test/notes/new, the recording went to /notes/ada"


def header(ok: bool) -> ExpectationOutcome:
    return ExpectationOutcome(check="text", expected=HEADER, found="", ok=ok)


def agent(proof_run: Callable[[AgentRequest], AgentRun], calls: list[str], before: list[ExpectationOutcome]) -> Any:
    """The test's own run replays and passes, its checks on the start page `before`; each proof replay is `proof_run`'s."""

    async def play(request: AgentRequest) -> AgentRun:
        if request.proof is None:
            own = AgentRun(execution=Execution.REPLAYED, expectations=[header(True)], requests=list(OWN_REQUESTS))
            own.held_before, own.done, own.usage = before, PASS, Usage(llm_calls=1, total_tokens=100)
            return own
        calls.append(request.proof.mutation.name)
        return proof_run(request)

    return play


def proved(
    proof_run: Callable[[AgentRequest], AgentRun], before: list[ExpectationOutcome] | None = None, **kw: Any
) -> tuple[TestResult, list[str]]:
    calls: list[str] = []
    own = agent(proof_run, calls, [header(True)] if before is None else before)
    result, _ = run(specs_named("add a note", **kw.pop("spec", {})), own, lambda s: RECORDING, prove=True, **kw)
    return result.tests[0], calls


def broken_page(*failing: ExpectationOutcome) -> Callable[[AgentRequest], AgentRun]:
    """Each proof replay drifts onto a page where these checks fail."""
    return lambda request: AgentRun(
        execution=Execution.REPLAYED, replay_error=DRIFT, expectations=list(failing), mutation_applied=True
    )


def test_a_test_whose_every_check_held_before_the_first_action_is_weak_after_one_replay() -> None:
    test, calls = proved(broken_page(header(False)), spec={"expect": {"text": "Acme notes"}})
    assert test.proof is not None and test.proof.verdict is ProofVerdict.WEAK, test.proof
    assert calls == ["POST /notes/new answers 500"]  # no other mutation could catch it by another check
    assert test.proof.reason.startswith("visible text 'Acme notes' was on the page before its first action")


def test_a_catch_by_a_check_that_held_before_does_not_end_a_proof_another_check_may_still_make() -> None:
    saved = ExpectationOutcome(check="text", expected="visible text 'Saved note: Ada'", found="", ok=False)
    replies = iter([[header(False)], [header(False), saved]])  # only the header fails first, then the saved text too

    def proof_run(request: AgentRequest) -> AgentRun:
        return broken_page(*next(replies))(request)

    two = {"expect": {"text": ["Acme notes", "Saved note: Ada"]}}
    test, calls = proved(proof_run, [header(True), saved], spec=two)
    assert test.proof is not None and test.proof.verdict is ProofVerdict.PROVEN, test.proof
    assert calls == ["POST /notes/new answers 500", "POST /notes/new answers 200 with an empty body and saves nothing"]
    assert test.proof.reason == "it fails when POST /notes/new answers 200 with an empty body and saves nothing"


def test_a_proof_needing_the_page_check_stops_at_the_test_s_budget_and_lists_what_it_did_not_replay() -> None:
    def judged_by_llm(request: AgentRequest) -> AgentRun:
        said = DoneReport(text=json.dumps({"status": "pass", "reason": "a note is listed"}), success=None)
        usage = Usage(llm_calls=1, total_tokens=100)
        return AgentRun(execution=Execution.REPLAYED, replay_error=DRIFT, done=said, usage=usage, mutation_applied=True)

    test, calls = proved(judged_by_llm, spec={"max_tokens": 150})
    assert calls == ["POST /notes/new answers 500"]  # its own run used 100 tokens, that replay 100 more: over 150
    assert test.proof is not None and test.proof.verdict is ProofVerdict.NOT_PROVEN, test.proof
    untried = [m for m in test.proof.mutations if m.reason == "not replayed: budget exceeded: max_tokens=150 (used 200)"]
    assert len(untried) == 2 and test.usage.total_tokens == 200


def test_the_run_s_budget_stops_proof_replays_too() -> None:
    def judged_by_llm(request: AgentRequest) -> AgentRun:
        said = DoneReport(text=json.dumps({"status": "pass", "reason": "a note is listed"}), success=None)
        return AgentRun(
            execution=Execution.REPLAYED, done=said, usage=Usage(llm_calls=1, total_tokens=100), mutation_applied=True
        )

    test, calls = proved(judged_by_llm, run_max_tokens=100)
    assert calls == [] and test.proof is not None and test.proof.verdict is ProofVerdict.NOT_PROVEN
    assert all("run budget exceeded: --run-max-tokens=100" in m.reason for m in test.proof.mutations)
