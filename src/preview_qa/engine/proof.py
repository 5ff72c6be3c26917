"""--prove: once a test has passed, its recording replays once per mutation of the preview (verdict/proof.py), in the
test's own slot of the run's concurrency, each judged by the test's own checks with the server-error rule off (on the
page the app showed, where the replay could not follow its recording), within the test's and the run's budgets. The
test's verdict never changes; its proof joins its result, and is cached by the recording and the preview's content."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from preview_qa.engine.agent_port import AgentFn, AgentRequest, Recorded, Recording, replaying
from preview_qa.engine.pricing import budget_exceeded
from preview_qa.events import Event, Observed
from preview_qa.lifecycle import within
from preview_qa.manifest.models import TestSpec
from preview_qa.reporters import Reporter
from preview_qa.reporters.output.files import write_atomic
from preview_qa.results import Execution, Proof, Status, TestResult, Usage
from preview_qa.secrets.redact import Redactor
from preview_qa.verdict.agent_run import AgentRun
from preview_qa.verdict.decide import replay_needs_llm_check
from preview_qa.verdict.proof import (
    Mutation,
    ProofRun,
    Tried,
    choose_mutations,
    expected_texts,
    judge,
    judge_replay,
    never_provable,
)

# Bump when what a proof tries, or how it judges, changes. 2: a drifted replay is judged by the test's checks, and a
# catch by checks that held before the first action is weak (#45); 3: a test written as steps, judged step by step (#47).
PROOF_FORMAT = 3
PROOFS = "proofs"  # the cache folder's subfolder for proofs


@dataclass(frozen=True)
class ProofKept(Event):
    """A test's proof, for the cache (ProofCacheReporter files it under its key)."""

    key: str
    proof: Proof


class Prover:
    """Proves the tests of one run: keeps what each run on the preview left, then replays the passing ones mutated."""

    def __init__(
        self,
        agent: AgentFn,
        publish: Callable[[Event], None],
        redactor: Redactor,
        cache: Path | None,
        run_budget_spent: Callable[[Usage], str | None] = lambda used: None,
    ):
        self._agent, self._publish, self._redactor = agent, publish, redactor
        self._folder = cache / PROOFS if cache is not None else None
        self._run_budget_spent = run_budget_spent  # why the run's budget allows no more, given this test's usage
        self._runs: dict[str, AgentRun] = {}

    def ran(self, spec: TestSpec, run: AgentRun) -> None:
        """A run of the test on the preview ended: the latest is the one its verdict rests on."""
        self._runs[spec.name] = run

    async def prove(
        self, spec: TestSpec, result: TestResult, recording: Recorded | None, request: AgentRequest, limit_s: float
    ) -> TestResult:
        """The result with its proof, for a test that passed and has a recording (the one its latest run replayed or
        made, which the runner keeps); any other as it was."""
        own = self._runs.pop(spec.name, None)
        if result.status is not Status.PASSED or own is None or recording is None:
            return result
        texts = [*spec.expect.shown_texts, *(text for step in spec.steps or [] for text in step.expect.shown_texts)]
        mutations = choose_mutations(own.requests, expected_texts(texts, spec.expect.data))  # each step's texts too
        key = _key(spec, recording, own.content_hash, mutations)
        cached = self._load(key)
        if cached is not None:
            return result.model_copy(update={"proof": cached.model_copy(update={"cached": True})})
        usage, tried, hopeless = Usage(), [], never_provable(spec, own.held_before)
        for mutation in mutations:
            spent_out = self._spent(spec, result.usage + usage)
            if spent_out is not None:  # listed, never dropped: the proof is not proven
                tried.append(Tried(mutation, "errored", f"not replayed: {spent_out}"))
                continue
            one, spent = await self._try(spec, replaying(request, recording), own, mutation, limit_s)
            tried.append(one)
            usage += spent
            if one.caught or (hopeless and one.held_before):  # behavioural ones come first: no later outcome can
                break  # change the verdict; nor any when every check held before the first action
        proof = judge(tried)
        if self._folder is not None and all(t.outcome != "errored" for t in tried):  # its reasons quote pages: redacted
            self._publish(ProofKept(key=key, proof=self._redactor.model(proof)))
        return result.model_copy(update={"proof": proof, "usage": result.usage + usage})

    async def _try(
        self, spec: TestSpec, request: AgentRequest, own: AgentRun, mutation: Mutation, limit_s: float
    ) -> tuple[Tried, Usage]:
        """One replay under `mutation`, its events kept out of the test's evidence (one line of its own says how it
        ended), judged by the test's checks alone (verdict/proof.py's judge_replay)."""
        mutated = dataclasses.replace(
            request, proof=ProofRun(mutation, tuple(own.requests)), emit=_silent, keep_state=None, log_requests=False
        )
        try:
            run = await within(self._agent(mutated), limit_s)
        except Exception as e:  # a timeout too: the mutation is not judged, never counted as caught
            run = AgentRun(execution=Execution.REPLAYED, infrastructure_error=f"{type(e).__name__}: {e}")
        tried = judge_replay(spec, mutation, run, own.held_before)
        detail = {"mutation": mutation.name, "outcome": tried.outcome, "reason": tried.reason}
        self._publish(Observed(name=spec.name, kind="proof", error=False, detail=detail))
        return tried, run.usage

    def _spent(self, spec: TestSpec, used: Usage) -> str | None:
        """Why no more proof replay may run: one that needs the page check's LLM call, past the test's budget or the
        run's (a replay judged by code alone costs no tokens)."""
        if not replay_needs_llm_check(spec):
            return None
        return budget_exceeded(spec, used) or self._run_budget_spent(used)

    def _load(self, key: str) -> Proof | None:
        if self._folder is None:
            return None
        try:
            return Proof.model_validate_json((self._folder / f"{key}.json").read_text(encoding="utf-8"))
        except (OSError, ValidationError):
            return None  # none yet, or damaged: the proof runs again


class ProofCacheReporter(Reporter):
    """Files each proof under its key in the cache folder; the only writer of its proofs."""

    def __init__(self, cache: Path):
        self.folder = cache / PROOFS

    def handle(self, event: Event) -> None:
        if isinstance(event, ProofKept):
            write_atomic(self.folder / f"{event.key}.json", event.proof.model_dump_json())


def _key(spec: TestSpec, recording: Recorded, content: str | None, mutations: list[Mutation]) -> str:
    """The recording, the test's checks, the preview's content as the run loaded it, and the mutations tried."""
    checks = spec.model_dump(mode="json", include={"task", "steps", "expect", "output_schema"})
    history = recording.history if isinstance(recording, Recording) else {i: r.history for i, r in recording.by_step.items()}
    blob: dict[str, Any] = {"format": PROOF_FORMAT, "history": history, "checks": checks, "content": content}
    blob["mutations"] = [m.name for m in mutations]
    return hashlib.sha256(json.dumps(blob, sort_keys=True, ensure_ascii=False, default=str).encode()).hexdigest()


def _silent(event: Event) -> None:
    """A proof replay's own events: not the test's evidence (its screenshots are not the test's)."""
