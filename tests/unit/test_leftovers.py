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


class ListingBrowser:
    """Stands in for Playwright's Browser: its CDP session lists `targets` (type, context) and the open `contexts`."""

    def __init__(self, targets: list[tuple[str, str]], contexts: list[str]):
        self.answers = {
            "Target.getTargets": {"targetInfos": [{"type": kind, "browserContextId": c} for kind, c in targets]},
            "Target.getBrowserContexts": {"browserContextIds": contexts},
        }

    async def new_browser_cdp_session(self) -> Any:
        return self

    async def send(self, method: str) -> dict[str, Any]:
        return self.answers[method]

    async def detach(self) -> None:
        pass


@pytest.mark.parametrize(
    ("targets", "contexts", "closed", "found"),
    [
        # another test's context, being closed beside the check: dropped from the list, its page not yet
        ([("page", "other"), ("page", "running")], ["running"], "mine", []),
        # a page opened in the shared default context is left, whoever closed what
        ([("page", "default"), ("page", "running")], ["running"], "mine", ["1 page(s) or worker(s) were left open"]),
        # the test's own context, still open after its close
        ([("page", "mine")], ["mine", "running"], "mine", ["1 browser context(s) were left open"]),
        # the last test out: any context still open is left, a page of a closed one on its way out is not
        (
            [("page", "other"), ("worker", "default")],
            ["running"],
            None,
            ["1 page(s) or worker(s) were left open", "1 browser context(s) were left open"],
        ),
    ],
)
def test_a_page_of_a_context_the_tests_closed_is_on_its_way_out_not_left(
    targets: list[tuple[str, str]], contexts: list[str], closed: str | None, found: list[str]
) -> None:
    browser = ListingBrowser(targets, contexts)
    assert asyncio.run(leftovers(browser, closed, gone={"mine", "other"})) == found  # type: ignore[arg-type]
