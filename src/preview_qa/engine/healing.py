"""Healing in plain sight: a test whose replay drifted on the page and whose agent then passed is healed — passed, and
counted and shown as such — unless the test says `heal: false`. A replay the page check's LLM answer or our own trouble
left unjudged falls back to the agent too, and is shown as that fall-back, never as healed. Only the default branch's
fall-backs replace a recording (RunConfig.keep_fall_back_recordings, read from GitHub's environment in config.py)."""

from __future__ import annotations

from dataclasses import dataclass

from preview_qa.manifest.models import TestSpec
from preview_qa.results import FallBack, Status, Verdict
from preview_qa.verdict.agent_run import AgentRun
from preview_qa.verdict.checks.requests import server_error_lines
from preview_qa.verdict.decide import Decision, decide


def may_heal(spec: TestSpec) -> bool:
    """Whether the agent may take over from a replay that no longer holds (`heal: false`: a release gate's test)."""
    return spec.heal


@dataclass(frozen=True)
class Handover:
    """A replay handing its test to the agent: why, and how the replay itself ended."""

    cause: FallBack
    replay_verdict: Verdict


def fall_back(spec: TestSpec, replay: AgentRun) -> Handover | None:
    """Why a replay that did not pass hands its test to the agent, or None when it may not: a secret it tried to carry
    off fails the test as it is, and under `heal: false` a page that changed fails it too (an unusable LLM answer or
    our own trouble says nothing about the page, so the agent runs the test then as it would without a recording)."""
    decision = decide(spec, replay)
    if decision.verdict.status is Status.PASSED or replay.secret_attempts:
        return None
    cause = why_fell_back(spec, replay, decision)
    return Handover(cause, decision.verdict) if may_heal(spec) or cause is not FallBack.PAGE_CHANGED else None


def why_fell_back(spec: TestSpec, replay: AgentRun, decision: Decision) -> FallBack:
    """The page changed: the replay drifted, a check failed on its final page, the server failed a request after an
    action, or the page check gave a valid verdict other than pass. The LLM: the page check gave no valid verdict. Our
    own trouble: the replay ended in an error."""
    if replay.replay_error:
        return FallBack.PAGE_CHANGED
    if replay.infrastructure_error:
        return FallBack.TOOL
    if any(not e.ok for e in decision.expectations) or server_error_lines(spec, replay):
        return FallBack.PAGE_CHANGED
    return FallBack.LLM_ANSWER if decision.report is None else FallBack.PAGE_CHANGED
