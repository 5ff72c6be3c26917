"""Pure rules for running a test more than once: which failures are retried, what its attempts (retries, or the runs
of --repeat-each) add up to, and what its run on the baseline deployment says about it."""

from __future__ import annotations

from preview_qa.manifest.models import TestSpec
from preview_qa.results import OtherRun, Status, TestResult, Usage

RETRIED = (Status.FAILED, Status.ERRORED)


def other_run(result: TestResult, attempt: int | None = None) -> OtherRun:
    return OtherRun(
        status=result.status, reason=result.reason, causes=result.causes, duration_s=result.duration_s, attempt=attempt
    )


def test_budget_left(spec: TestSpec, used: Usage) -> TestSpec | None:
    """The spec with its per-test budgets lowered by what its earlier attempts used; None once one is spent."""
    changes: dict[str, float] = {}
    if spec.max_tokens is not None:
        if used.total_tokens >= spec.max_tokens:
            return None
        changes["max_tokens"] = spec.max_tokens - used.total_tokens
    if spec.max_cost_usd is not None:
        if (used.cost_usd or 0) >= spec.max_cost_usd:
            return None
        changes["max_cost_usd"] = spec.max_cost_usd - (used.cost_usd or 0)
    return spec.model_copy(update=changes) if changes else spec


def wants_retry(spec: TestSpec, attempts: list[TestResult]) -> bool:
    """A failed or errored attempt is retried while the test has retries left (the runner adds its budgets and the
    provider's circuit breaker); a test stopped by its own budget is not: another attempt would be over it too, nor
    one that tried to send a secret off its allowed hosts."""
    last = attempts[-1]
    if last.status not in RETRIED or len(attempts) > spec.retries or last.secrets_blocked:  # no second chance to leak
        return False
    return test_budget_left(spec, sum((a.usage for a in attempts), Usage())) is not None


def combine(attempts: list[TestResult]) -> TestResult:
    """The test's result: its last attempt's, with every attempt's duration and usage and the earlier ones listed."""
    last = attempts[-1]
    if len(attempts) == 1:
        return last
    return last.model_copy(
        update={
            "attempts": len(attempts),
            "flaky": last.status is Status.PASSED,  # only failures are retried: a pass at the end followed one
            "earlier_attempts": [other_run(a) for a in attempts[:-1]],
            "duration_s": round(sum(a.duration_s for a in attempts), 2),
            "usage": sum((a.usage for a in attempts), Usage()),
        }
    )


def repeated(runs: list[TestResult]) -> TestResult:
    """--repeat-each: the test's result over its runs, each from scratch. It is its last passing run's (else its last
    run's) with every run's duration and usage, the others listed in order, and how many passed; a test that passed on
    some runs and not on others is flaky, and passes, as a test that passed on a retry does."""
    passed = [n for n, r in enumerate(runs) if r.status is Status.PASSED]
    shown = passed[-1] if passed else len(runs) - 1
    return runs[shown].model_copy(
        update={
            "attempts": len(runs),
            "passes": len(passed),
            "shown_attempt": shown + 1,
            "flaky": 0 < len(passed) < len(runs),
            "earlier_attempts": [other_run(r, n + 1) for n, r in enumerate(runs) if n != shown],
            "duration_s": round(sum(r.duration_s for r in runs), 2),
            "usage": sum((r.usage for r in runs), Usage()),
        }
    )


def compared(preview: TestResult, baseline: TestResult, regression: bool | None) -> TestResult:
    """The preview's result with its run on the baseline and what its final verdict makes of that (verdict/decide.py:
    a regression when it passed there). The baseline run's LLM calls are the test's too (usage); its duration is its
    own (the test's result did not wait for it)."""
    return preview.model_copy(
        update={
            "baseline": other_run(baseline),
            "regression": regression,
            "usage": preview.usage + baseline.usage,
        }
    )
