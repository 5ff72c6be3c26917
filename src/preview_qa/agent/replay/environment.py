"""A replay's browser made as the recording's was: the same viewport, scale, device, user agent and locale on any
Chromium build, and, where it cannot be known to match, why not."""

from __future__ import annotations

from preview_qa.engine.agent_port import Recording
from preview_qa.manifest.models import TestSpec
from preview_qa.results import Emulation

KEYS = ("viewport", "device_scale_factor", "is_mobile", "has_touch", "user_agent", "locale", "timezone", "color_scheme")


def emulation_for(spec: TestSpec, recording: Recording | None) -> Emulation | None:
    """What a test's context emulates: the test's own emulation for the agent; for a replay, what the recording's pages
    saw, user agent and locale included (another Chromium build has another user agent, another machine another default
    locale), or the test's own for a recording that did not keep it."""
    return (recording and recording.environment) or spec.emulation


def environment_gap(recording: Recording | None, live: Emulation) -> str | None:
    """Why a replay's pages (seeing `live`) may not see what the recording's saw, in one sentence; None when they see
    the same, and for the agent."""
    if recording is None:
        return None
    recorded = recording.environment
    if recorded is None:
        return (
            "the recording kept no viewport, user agent or locale (an earlier version made it): replayed as "
            f"{live.label()}, with this browser's user agent; a run with --no-cache records them afresh"
        )
    differ = [key for key in KEYS if getattr(recorded, key) != getattr(live, key)]
    if not differ:
        return None
    return "the replay's browser differs from the recording's in " + ", ".join(
        f"{key} ({getattr(recorded, key)} recorded, {getattr(live, key)} now)" for key in differ
    )
