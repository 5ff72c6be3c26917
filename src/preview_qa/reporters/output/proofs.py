"""--prove in words, for every reporter: how the passing tests' proofs ended, and the vacuous and weak tests, each with
the mutation it survived and what to add. Plain data; each reporter renders it (untrusted names through its own
escaping)."""

from __future__ import annotations

from dataclasses import dataclass

from preview_qa.results import ProofVerdict, RunResult, TestResult

FLAGGED = (ProofVerdict.VACUOUS, ProofVerdict.WEAK)  # the tests a reviewer should strengthen, worst first
ADVICE = {
    ProofVerdict.VACUOUS: "It would stay green with the app broken: add an `expect` on what the app did (a saved "
    "value, a result: a text or element it shows only once the action worked).",
    ProofVerdict.WEAK: "Add an `expect` on what the app did (a saved value, a result), not only on the page around it.",
}


@dataclass(frozen=True)
class FlaggedTest:
    name: str
    verdict: ProofVerdict
    survived: list[str]  # the mutations it passed under
    reason: str
    advice: str

    @property
    def finding(self) -> str:
        """What the proof found, in a line: the mutations it survived, else (weak by checks that held before its first
        action) its reason."""
        return f"passes even when {'; '.join(self.survived)}" if self.survived else self.reason


def proof_counts(run: RunResult) -> str:
    """'3 proven, 1 weak, 1 vacuous' over the tests proven (--prove); '' when none was."""
    return ", ".join(
        f"{len(tests)} {verdict.value.replace('_', ' ')}" for verdict in ProofVerdict if (tests := run.proved(verdict))
    )


def flagged_tests(run: RunResult) -> list[FlaggedTest]:
    """The vacuous tests, then the weak ones."""
    return [_flagged(t) for verdict in FLAGGED for t in run.proved(verdict)]


def _flagged(test: TestResult) -> FlaggedTest:
    assert test.proof is not None
    survived = [m.name for m in test.proof.mutations if m.outcome == "passed"]
    return FlaggedTest(test.name, test.proof.verdict, survived, test.proof.reason, ADVICE[test.proof.verdict])
