"""Healing in plain sight: a test whose replay drifted and whose agent then passed is healed — passed, and counted and
shown as such — unless the test says `heal: false`; and only the default branch's healed runs replace a recording."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from preview_qa.manifest.models import TestSpec
from preview_qa.results import Status, Verdict

PULL_REQUEST_EVENTS = ("pull_request", "pull_request_target")


def may_heal(spec: TestSpec) -> bool:
    """Whether the agent may take over from a replay that no longer holds (`heal: false`: a release gate's test)."""
    return spec.heal


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


def healed_recordings_kept(env: Mapping[str, str]) -> bool:
    """Whether a healed run's recording may replace the one in the cache: always on one's own machine; in GitHub
    Actions only in a run on the repository's default branch, never in a pull request's (its drift may be the very
    regression under review)."""
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
