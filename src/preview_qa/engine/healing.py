"""Healing in plain sight: a test whose replay drifted on the page and whose agent then passed is healed — passed, and
counted and shown as such — unless the test says `heal: false`. A replay the page check's LLM answer or our own trouble
left unjudged falls back to the agent too, and is shown as that fall-back, never as healed. Only the default branch's
fall-backs replace a recording."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from preview_qa.manifest.models import TestSpec
from preview_qa.results import FallBack, Status, Verdict
from preview_qa.verdict.agent_run import AgentRun
from preview_qa.verdict.decide import Decision
from preview_qa.verdict.requests import server_error_lines

PULL_REQUEST_EVENTS = ("pull_request", "pull_request_target")


def may_heal(spec: TestSpec) -> bool:
    """Whether the agent may take over from a replay that no longer holds (`heal: false`: a release gate's test)."""
    return spec.heal


def fall_back(spec: TestSpec, replay: AgentRun, decision: Decision) -> FallBack | None:
    """Why a replay that did not pass hands its test to the agent, or None when it may not: a secret it tried to carry
    off fails the test as it is, and under `heal: false` a page that changed fails it too (an unusable LLM answer or
    our own trouble says nothing about the page, so the agent runs the test then as it would without a recording)."""
    if decision.verdict.status is Status.PASSED or replay.secret_attempts:
        return None
    cause = why_fell_back(spec, replay, decision)
    return cause if may_heal(spec) or cause is not FallBack.PAGE_CHANGED else None


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


def not_healed(verdict: Verdict, drift: str | None) -> Verdict:
    """A replay that did not hold, under `heal: false`: it fails as it ended, with the drift as its reason; an error
    (the browser, the preview) stays an error with its own cause."""
    if verdict.status is Status.ERRORED or verdict.status is Status.PASSED:
        return verdict
    why = drift or f"the replay did not pass ({verdict.reason})"
    return Verdict(
        status=Status.FAILED,
        reason=f"{why}; heal: false, so the agent did not take over",
        causes=[verdict.reason, *verdict.causes] if drift else verdict.causes,
    )


def fall_back_recordings_kept(env: Mapping[str, str]) -> bool:
    """Whether the agent's recording after any fall-back (healed or not) may replace the one in the cache: always on
    one's own machine; in GitHub Actions only in a run on the repository's default branch, never in a pull request's
    (its drift may be the very regression under review, and whatever made it fall back, the recording that passed on
    the default branch is the one that replays there)."""
    if env.get("GITHUB_ACTIONS") != "true":
        return True
    if env.get("GITHUB_EVENT_NAME") in PULL_REQUEST_EVENTS:
        return False
    return bool(env.get("GITHUB_REF_NAME")) and env.get("GITHUB_REF_NAME") == _default_branch(env)


def _default_branch(env: Mapping[str, str]) -> str | None:
    try:
        event = json.loads(Path(env.get("GITHUB_EVENT_PATH", "")).read_text(encoding="utf-8"))
        branch = event["repository"]["default_branch"]
    except (OSError, ValueError, KeyError, TypeError):
        return None  # not knowing the default branch keeps the recording that is there
    return branch if isinstance(branch, str) else None
