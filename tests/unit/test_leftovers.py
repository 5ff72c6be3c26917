"""The check a pooled browser gets after a test (agent/browsers/leftovers.py) names the true cause when it
fails: a browser that died says so, though the request it cut off reached us before its disconnection did."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from preview_qa.agent.browsers.leftovers import leftovers


class DyingBrowser:
    """Stands in for Playwright's Browser: its CDP session fails at once; it is heard of as disconnected after
    `disconnects_after` seconds (never, with None)."""

    def __init__(self, disconnects_after: float | None):
        self.after, self.connected = disconnects_after, True
        self.listeners: list[Callable[[Any], None]] = []

    async def new_browser_cdp_session(self) -> Any:
        if self.after is not None:
            asyncio.get_running_loop().call_later(self.after, self._disconnect)
        raise RuntimeError("Target page, context or browser has been closed")

    def _disconnect(self) -> None:
        self.connected = False
        for listener in list(self.listeners):
            listener(self)

    def is_connected(self) -> bool:
        return self.connected

    def on(self, event: str, listener: Callable[[Any], None]) -> None:
        assert event == "disconnected"
        self.listeners.append(listener)

    def remove_listener(self, event: str, listener: Callable[[Any], None]) -> None:
        self.listeners.remove(listener)


@pytest.mark.parametrize(
    ("disconnects_after", "reason"),
    [
        (0.05, "it disconnected or crashed"),  # its death, heard of just after the failed request
        (None, "it could not be inspected (RuntimeError)"),  # alive, but it did not answer
    ],
)
def test_a_failed_check_names_a_death_heard_of_just_after_it(disconnects_after: float | None, reason: str) -> None:
    browser = DyingBrowser(disconnects_after)
    found = asyncio.run(leftovers(browser, None))  # type: ignore[arg-type]
    assert found == [reason]
    assert browser.listeners == []  # nothing of the check stays on the browser
