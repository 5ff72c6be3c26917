"""Pure: the mutations of the preview that prove a passing test (chosen from the requests its own run caused, the
behavioural ones first), how the test ended under each (judged by its own checks, on whatever page the app showed),
and what that says about it: proven, weak, vacuous, or not proven."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Literal
from urllib.parse import urlsplit

from preview_qa.manifest.models import TestSpec
from preview_qa.results import REASON_LIMIT, ExpectationOutcome, MutationOutcome, Proof, ProofVerdict, Status, one_line
from preview_qa.verdict.agent_run import AgentRun, SeenRequest
from preview_qa.verdict.decide import replay_needs_llm_check
from preview_qa.verdict.steps import decide_test

MAX_MUTATIONS = 4  # replays per test: each costs what the test's own replay does
APP_CALLS = ("fetch", "xhr")  # the GETs whose failure the app itself must handle
READS = ("document", "fetch", "xhr")  # a GET after a save that may read what the test's own run saved
Outcome = Literal["failed", "passed", "errored", "not_applied"]  # not_applied: it met no request of the replay
# Checks whose holding on the start page says nothing: an absence holds on most pages, and its failing under a mutation
# means the app showed what the test forbids.
NEVER_HELD_BEFORE = frozenset({"not_text"})


class MutationKind(StrEnum):
    SERVER_ERROR = "server_error"  # a request the test's actions caused answers 500
    NOT_SAVED = "not_saved"  # a non-GET answers 200 with an empty body, never forwarded: the app believes it saved
    DOCUMENT_ERROR = "document_error"  # the test's final document answers 500
    TEXT_REMOVED = "text_removed"  # the texts the test expects are cut from the documents and responses carrying them


BEHAVIOURAL = frozenset({MutationKind.SERVER_ERROR, MutationKind.NOT_SAVED})  # what the app did, not how its page looks


def path_of(url: str) -> str:
    """A URL's path: never its query, which may hold a secret."""
    return urlsplit(url).path or "/"


@dataclass(frozen=True)
class Mutation:
    """One broken copy of the preview, made in the test's browser only."""

    kind: MutationKind
    method: str = "GET"
    path: str = ""
    texts: tuple[str, ...] = ()
    read_after: str | None = None  # "GET /api/settings": a read after this write in the test's own run

    @property
    def behavioural(self) -> bool:
        return self.kind in BEHAVIOURAL

    @property
    def name(self) -> str:
        match self.kind:
            case MutationKind.SERVER_ERROR:
                return f"{self.method} {self.path} answers 500"
            case MutationKind.NOT_SAVED:
                return f"{self.method} {self.path} answers 200 with an empty body and saves nothing"
            case MutationKind.DOCUMENT_ERROR:
                return f"the final document GET {self.path} answers 500"
            case MutationKind.TEXT_REMOVED:
                return f"the expected text {', '.join(repr(t) for t in self.texts)} is removed from the pages"

    @property
    def unmet(self) -> str:
        """Why a mutation that met no request of its replay says nothing of the test."""
        if self.kind is MutationKind.TEXT_REMOVED:
            return "no document or response of the replay carried the expected text (it may arrive another way, e.g. a WebSocket)"
        return f"the replay made no {self.method} {self.path} request past its start page"

    def hits(self, method: str, url: str) -> bool:
        """Whether a request is this mutation's own (a text removal's is every page and response)."""
        return self.kind is MutationKind.TEXT_REMOVED or (method == self.method and path_of(url) == self.path)


@dataclass(frozen=True)
class ProofRun:
    """What one proof replay's browser needs: the mutation, and the test's own run's requests, whose non-GET answers
    stand in for the preview's (no non-GET of a proof reaches it)."""

    mutation: Mutation
    seen: tuple[SeenRequest, ...]

    def answer(self, method: str, url: str, nth: int) -> SeenRequest | None:
        """The own run's answer to the `nth` (from 0) non-GET with this method and URL (its last one past the end)."""
        same = [r for r in self.seen if r.method == method and r.url == url and r.status]
        return same[min(nth, len(same) - 1)] if same else None


@dataclass(frozen=True)
class Tried:
    """A mutation, replayed and judged by the test's own checks; `held_before`, for one that failed the test only by
    checks that already held on its start page before its first action, says which (such a catch proves nothing)."""

    mutation: Mutation
    outcome: Outcome
    reason: str
    held_before: tuple[str, ...] = ()

    @property
    def caught(self) -> bool:
        """The test caught the mutation: a check failed that did not already hold before the first action."""
        return self.outcome == "failed" and not self.held_before


def judge_replay(spec: TestSpec, mutation: Mutation, run: AgentRun, before: list[ExpectationOutcome] | None) -> Tried:
    """How the test ended under `mutation`, by its own checks alone (the server-error rule is off: the mutation's 500
    is the point). A replay that could not follow its recording is judged on the page the app showed instead, as if the
    agent had reported pass there: only a failing check (or the page check's fail) is a catch, and one by checks that
    all held on the start page before the first action (`before`: the own run's, None when unknown) is marked so."""
    drift = run.replay_error or next((s.drift for s in run.step_runs if s.drift), None)  # a step test's: its goal's
    if run.read_after_made is False:  # what the own run saved was never read back: the outcome is the mutation's own
        mutation = dataclasses.replace(mutation, read_after=None)
    decision = decide_test(spec, dataclasses.replace(run, replay_error=None, server_errors=[]), judge_drift=True)
    verdict = decision.verdict
    if run.mutation_applied is False and run.infrastructure_error is None:  # the preview as it is: it says nothing
        return Tried(mutation, "not_applied", mutation.unmet)
    if verdict.status is Status.PASSED:
        held = f"the replay could not follow its recording ({drift}); the test's checks held on the page the app showed instead"
        return Tried(mutation, "passed", one_line(held if drift else "the test's checks still held", REASON_LIMIT))
    failed = [e for e in decision.expectations if not e.ok]
    refused = decision.report is not None and decision.report.status == "fail"  # the page check's own fail
    where = f" (on the page the app showed when the replay could not follow its recording: {drift})" if drift else ""
    if verdict.status is not Status.FAILED or run.secret_attempts or not (failed or refused):
        return Tried(mutation, "errored", one_line(verdict.reason + where, REASON_LIMIT))
    held_before = () if refused else held_before_only(failed, before)
    said = f"{verdict.reason}; but {' and '.join(held_before)} before the first action" if held_before else verdict.reason
    return Tried(mutation, "failed", one_line(said + where, REASON_LIMIT), held_before)


def never_provable(spec: TestSpec, before: list[ExpectationOutcome] | None) -> bool:
    """Every check of the test already held on its start page before its first action, and no page check or data
    judges it: whatever a mutation breaks, a catch can only be by checks that held there, so its first one ends its
    proof (weak) without the other replays."""
    held = before is not None and all(o.ok and o.check not in NEVER_HELD_BEFORE for o in before)
    return bool(before) and held and not replay_needs_llm_check(spec)


def held_before_only(failed: list[ExpectationOutcome], before: list[ExpectationOutcome] | None) -> tuple[str, ...]:
    """When every failed check already held on the start page before the first action, each in words ("visible text
    'Django administration' was on the page"); else none: a check that held before the test acted says nothing about
    what its actions did."""
    held = {(o.check, o.expected) for o in before or [] if o.ok and o.check not in NEVER_HELD_BEFORE}
    if not failed or any((o.check, o.expected) not in held for o in failed):
        return ()
    return tuple(f"{o.expected} was on the page" if o.check == "text" else f"{o.expected} held" for o in failed)


def choose_mutations(requests: list[SeenRequest], texts: list[str]) -> list[Mutation]:
    """At most MAX_MUTATIONS, behavioural first: each non-GET the test's actions caused answers 500, then answers 200
    and saves nothing; each fetch/XHR GET they caused answers 500; then the final document, when an action led to it
    (a start page that answers 500 says nothing about the test's checks), answers 500; then the expected texts are
    removed."""
    caused = [r for r in requests if r.after is not None]
    writes = list(dict.fromkeys((r.method, path_of(r.url)) for r in caused if r.method != "GET"))
    reads = list(dict.fromkeys(path_of(r.url) for r in caused if r.method == "GET" and r.resource_type in APP_CALLS))
    chosen: list[Mutation] = []
    for method, path in writes:
        read = _read_after(requests, method, path)
        chosen += [
            Mutation(MutationKind.SERVER_ERROR, method, path, read_after=read),
            Mutation(MutationKind.NOT_SAVED, method, path, read_after=read),
        ]
    chosen += [Mutation(MutationKind.SERVER_ERROR, "GET", path) for path in reads]
    final = next((r for r in reversed(requests) if r.resource_type == "document"), None)
    if final is not None and final.method == "GET" and final.after is not None:
        chosen.append(Mutation(MutationKind.DOCUMENT_ERROR, "GET", path_of(final.url)))
    chosen += [Mutation(MutationKind.TEXT_REMOVED, texts=tuple(texts))] if texts else []
    return chosen[:MAX_MUTATIONS]


def expected_texts(texts: list[str], data: dict[str, Any]) -> list[str]:
    """What a test expects to read on its pages: its `expect.text` and `expect.appeared`, and the strings its
    `expect.data` wants."""
    return list(dict.fromkeys([*texts, *(v.strip() for v in data.values() if isinstance(v, str) and v.strip())]))


def _read_after(requests: list[SeenRequest], method: str, path: str) -> str | None:
    """The first same-origin GET after the write `method path` (a page, a fetch): it reads what the own run saved."""
    first = next(i for i, r in enumerate(requests) if r.method == method and path_of(r.url) == path)
    later = (r for r in requests[first + 1 :] if r.method == "GET" and r.resource_type in READS)
    return next((f"GET {path_of(r.url)}" for r in later), None)


def judge(tried: list[Tried]) -> Proof:
    """The test's proof from its mutations' outcomes: proven when a behavioural one was caught (or, when its actions
    caused no request to break, a page one) by a check that did not already hold before its first action; not proven
    when a behavioural one it survived cannot be told apart from its own run, or one could not be judged; weak when
    only a page one caught it, or only checks that held before its first action failed; vacuous when it survived them
    all."""
    outcomes = [MutationOutcome(name=t.mutation.name, outcome=t.outcome, reason=t.reason) for t in tried]
    met = [t for t in tried if t.outcome != "not_applied"]  # a mutation that changed nothing proves nothing either way
    behavioural = [t for t in met if t.mutation.behavioural]
    page = [t for t in met if not t.mutation.behavioural]

    def proof(verdict: ProofVerdict, reason: str) -> Proof:
        return Proof(verdict=verdict, reason=reason, mutations=outcomes)

    caught = _caught(behavioural) or (None if behavioural else _caught(page))
    if caught is not None:
        return proof(ProofVerdict.PROVEN, f"it fails when {caught.mutation.name}")
    if not tried:
        return proof(ProofVerdict.NOT_PROVEN, "its run caused no request and it expects no text: nothing to mutate")
    if not met:
        return proof(ProofVerdict.NOT_PROVEN, f"no mutation changed what its replay loaded: {tried[0].reason}")
    unclear = next((t for t in behavioural if t.outcome == "passed" and t.mutation.read_after), None)
    if unclear is not None:
        return proof(
            ProofVerdict.NOT_PROVEN,
            f"it passes when {unclear.mutation.name}, but {unclear.mutation.read_after} after it reads what the test's "
            "own run already saved: the proof cannot tell the two apart",
        )
    errored = _first(behavioural or page, "errored")
    if errored is not None:
        return proof(ProofVerdict.NOT_PROVEN, f"the replay when {errored.mutation.name} could not be judged: {errored.reason}")
    survived, page_failed = _first(behavioural, "passed"), _first(page, "failed")
    if survived is not None and page_failed is not None:
        return proof(
            ProofVerdict.WEAK,
            f"passes even when {survived.mutation.name}; fails only when {page_failed.mutation.name}: its checks look at "
            "the page, not at what the app did",
        )
    held = _first(met, "failed")  # every failure left is by checks that held before its first action
    if held is not None:
        return proof(
            ProofVerdict.WEAK,
            f"{' and '.join(held.held_before)} before its first action, and only that failed when {held.mutation.name}",
        )
    return proof(ProofVerdict.VACUOUS, f"passes even when {met[0].mutation.name}")


def _caught(tried: list[Tried]) -> Tried | None:
    return next((t for t in tried if t.caught), None)


def _first(tried: list[Tried], outcome: Outcome) -> Tried | None:
    return next((t for t in tried if t.outcome == outcome), None)
