"""Pure: the mutations of the preview that prove a passing test (chosen from the requests its own run caused, the
behavioural ones first), and what the test's outcome under each says about it: proven, weak, vacuous, or not proven."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Literal
from urllib.parse import urlsplit

from preview_qa.results import MutationOutcome, Proof, ProofVerdict
from preview_qa.verdict.agent_run import SeenRequest

MAX_MUTATIONS = 4  # replays per test: each costs what the test's own replay does
APP_CALLS = ("fetch", "xhr")  # the GETs whose failure the app itself must handle
READS = ("document", "fetch", "xhr")  # a GET after a save that may read what the test's own run saved
Outcome = Literal["failed", "passed", "errored", "not_applied"]  # not_applied: it met no request of the replay


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
    """A mutation, replayed and judged by the test's own checks."""

    mutation: Mutation
    outcome: Outcome
    reason: str


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
    """The test's proof from its mutations' outcomes: proven when a behavioural one failed it (or, when its actions
    caused no request to break, a page one); not proven when a behavioural one it survived cannot be told apart from
    its own run, or none could be judged; weak when only a page one failed it; vacuous when it survived them all."""
    outcomes = [MutationOutcome(name=t.mutation.name, outcome=t.outcome, reason=t.reason) for t in tried]
    met = [t for t in tried if t.outcome != "not_applied"]  # a mutation that changed nothing proves nothing either way
    behavioural = [t for t in met if t.mutation.behavioural]
    page = [t for t in met if not t.mutation.behavioural]

    def proof(verdict: ProofVerdict, reason: str) -> Proof:
        return Proof(verdict=verdict, reason=reason, mutations=outcomes)

    caught = _first(behavioural, "failed") or (None if behavioural else _first(page, "failed"))
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
    judged = behavioural or page
    if any(t.outcome == "errored" for t in judged):
        errored = next(t for t in judged if t.outcome == "errored")
        return proof(ProofVerdict.NOT_PROVEN, f"the replay when {errored.mutation.name} could not be judged: {errored.reason}")
    survived = judged[0].mutation.name
    page_caught = _first(page, "failed")
    if page_caught is not None:
        return proof(
            ProofVerdict.WEAK,
            f"passes even when {survived}; fails only when {page_caught.mutation.name}: its checks look at the page, "
            "not at what the app did",
        )
    return proof(ProofVerdict.VACUOUS, f"passes even when {survived}")


def _first(tried: list[Tried], outcome: Outcome) -> Tried | None:
    return next((t for t in tried if t.outcome == outcome), None)
