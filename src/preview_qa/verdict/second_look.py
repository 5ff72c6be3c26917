"""Pure: the judge's second look at a pass no page check of its own held (issue #64): which quotes it is asked about,
each with the whole text of the line that shows it, and what its structured answer makes of the pass. A quote it finds
is not the outcome (a claim or an instruction aimed at a tester) fails the test; no valid answer fails it; a provider
that failed errors it. Skipped when the test's own checks decide."""

from __future__ import annotations

from typing import Protocol

from preview_qa.manifest.models import TestSpec
from preview_qa.results import REASON_LIMIT, QuoteCheck, Status, Verdict, one_line
from preview_qa.verdict.agent_run import AgentRun
from preview_qa.verdict.quotes import PagesShown, fold_quote, quoted_in

CONTEXT_LIMIT = 600  # characters of the text around a quote sent to the second look


class Decision(Protocol):
    """What a second look reads of verdict/decide.py's Decision (named here, so that decide.py, which reads the look's
    verdict, is imported by nothing it imports)."""

    @property
    def verdict(self) -> Verdict: ...
    @property
    def quotes(self) -> list[QuoteCheck]: ...
    @property
    def checked(self) -> bool: ...


def looked_at(spec: TestSpec, decision: Decision, shown: PagesShown) -> list[tuple[str, str]]:
    """The quotes a second look is asked about, each with the text of the line (or passage) that showed it; empty when
    none is wanted: not a pass, a test whose own checks decide, a test written as steps, or no quote that grounds."""
    if spec.steps is not None or decision.verdict.status is not Status.PASSED or decision.checked:
        return []
    if spec.expect.has_page_checks:
        return []
    grounding = [q.quote for q in decision.quotes if q.found and not q.in_instruction]
    return [(quote, context_of(quote, shown)) for quote in grounding]


def checks_decide(spec: TestSpec, decision: Decision) -> bool:
    """Whether a pass's own checks decide it, so that no second look is asked for (and the events say so)."""
    return decision.verdict.status is Status.PASSED and (decision.checked or spec.expect.has_page_checks)


def context_of(quote: str, shown: PagesShown) -> str:
    """The whole text of the first line that shows `quote` (the element around it), else of the passage."""
    for passage in shown.texts:
        if not quoted_in(quote, passage.text):
            continue
        line = next((line for line in passage.text.splitlines() if quoted_in(quote, line)), passage.text)
        return line[:CONTEXT_LIMIT]
    return quote


def look_verdict(run: AgentRun) -> Verdict | None:
    """What the second look's answer makes of a pass: None when it holds (or none was asked), else the failure (or,
    for a provider that failed, the error)."""
    if not run.second_look_asked:
        return None
    look = run.second_look
    if look is None:
        faults = [f for f in run.llm_faults if f.purpose == "second_look"]
        if faults and faults[-1].kind == "provider":
            fault = faults[-1]
            said = f"HTTP {fault.status}: {fault.message}" if fault.status else fault.message
            return _verdict(Status.ERRORED, f"LLM provider error (second look): {said}")
        return _verdict(Status.FAILED, "the second look at the agent's quotes gave no valid answer")
    answers = {fold_quote(a.quote): a for a in look.quotes}
    for quote in run.second_look_asked:
        answer = answers.get(fold_quote(quote))
        if answer is None:
            return _verdict(Status.FAILED, f"the second look at the agent's quotes gave no answer for {quote!r}")
        if not answer.shows_outcome:
            why = answer.reason.strip() or "no reason given"
            return _verdict(Status.FAILED, f"the second look found that {quote!r} is not the outcome: {why}")
    return None


def look_line(run: AgentRun) -> str | None:
    """The second look in words, for results.json: what it was asked and found, with what it spent; that it was
    skipped because the test's own checks decide; None when no pass wanted one."""
    if run.second_look_skipped:
        return "skipped: the test's own page checks decide its pass"
    if not run.second_look_asked:
        return None
    spent = run.second_look_usage
    cost = "" if spent is None or spent.cost_usd is None else f", ${spent.cost_usd:.4f}"
    calls = f" ({spent.llm_calls} LLM call, {spent.total_tokens} tokens{cost})" if spent is not None else ""
    asked = ", ".join(repr(q) for q in run.second_look_asked)
    problem = look_verdict(run)
    found = "each shows the outcome" if problem is None else problem.reason
    return one_line(f"asked about {asked}{calls}: {found}", REASON_LIMIT)


def _verdict(status: Status, reason: str) -> Verdict:
    return Verdict(status=status, reason=one_line(reason, REASON_LIMIT))
