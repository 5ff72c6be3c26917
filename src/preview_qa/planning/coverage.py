"""Pure: which changed routes a test already covers: it starts on the route, or a recorded run of it passed through
the route (the replay cache's recordings)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from preview_qa.manifest.models import Manifest, TestSpec
from preview_qa.selection.routes import Route


def covered_by(route: Route, manifest: Manifest, recorded: Callable[[TestSpec], list[str]]) -> str | None:
    """The first test that covers `route`, and how, in words; None when none does."""
    for test in manifest.tests:
        if route.matches(urlsplit(test.start).path or "/"):
            return f"test '{test.name}' starts there"
    for test in manifest.tests:
        if any(route.matches(urlsplit(url).path or "/") for url in recorded(test)):
            return f"a recorded run of test '{test.name}' passed through it"
    return None


def recorded_urls(history: dict[str, Any]) -> list[str]:
    """The URLs a recording's steps were on (browser-use's history, as the replay cache keeps it)."""
    steps = history.get("history") or []
    return [url for step in steps if isinstance(step, dict) and isinstance(url := (step.get("state") or {}).get("url"), str)]


def opened(spec: TestSpec) -> list[str]:
    """The pages a test written as steps opens by its `open` steps: they are visited, like a recording's."""
    return [step.open for step in spec.steps or [] if step.open is not None]
