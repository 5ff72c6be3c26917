"""2. of the patches ledger (agent/adapter/patches.py): browser-use's session on one test's context of a pooled
browser, with three of its private methods overridden and two private attributes touched."""

from __future__ import annotations

import functools
from typing import Any

from browser_use import BrowserSession
from browser_use.browser.cloud.cloud import CloudBrowserClient
from browser_use.browser.events import AgentFocusChangedEvent
from pydantic import PrivateAttr


@functools.cache
def idle_cloud_client() -> CloudBrowserClient:
    return CloudBrowserClient()


class ContextSession(BrowserSession):
    """2. browser-use's session on a pooled browser (agent/browsers/pool.py), with two differences: tabs it opens itself (a
    `navigate` in a new tab) belong to the test's own context, not to the browser's shared default one; and each step
    keeps its elements for the replay cache (on a tab switch browser-use empties its element map in place, and that map
    is also the one of the step that opened the tab, whose history then lost the element it clicked). And browser-use
    never resizes a page: Playwright emulates each context's viewport (agent/browsers/pool.py), as for the test's replay."""

    _context_id: str | None = PrivateAttr(default=None)
    _refused: list[str] = PrivateAttr(default_factory=list)  # what its scope refused, over every connection it made
    # Private `_cloud_browser_client`: never used (no cloud browser), yet browser-use builds one per session, an HTTP
    # client with its TLS set-up; one idle client serves every session.
    _cloud_browser_client: CloudBrowserClient = PrivateAttr(default_factory=lambda: idle_cloud_client())

    def in_context(self, context_id: str) -> ContextSession:
        self._context_id = context_id
        return self

    async def _cdp_set_viewport(
        self, width: int, height: int, device_scale_factor: float = 1.0, mobile: bool = False, target_id: str | None = None
    ) -> None:
        """Private `_cdp_set_viewport`: browser-use sets its profile's viewport on every tab it opens or focuses, and
        always as a desktop one (mobile: false). Playwright emulates the test's viewport (the default desktop's or its
        device's) on every page of its context already, exactly as for the test's replay; browser-use's override would
        undo a device's mobile emulation, and is the one thing a replay, driven by Playwright alone, would not do."""

    @property
    def refused(self) -> list[str]:
        """The commands its scope refused: each would have reached outside the test's context."""
        return self._refused

    async def on_AgentFocusChangedEvent(self, event: AgentFocusChangedEvent) -> None:
        # Private `_cached_selector_map`: what browser-use empties is now a copy of its own.
        self._cached_selector_map = dict(self._cached_selector_map)
        await super().on_AgentFocusChangedEvent(event)

    async def _cdp_create_new_page(self, url: str = "about:blank", background: bool = False, new_window: bool = False) -> str:
        """Private `_cdp_create_new_page` (and `_cdp_client_root`): as browser-use's, plus the test's context id."""
        params: dict[str, Any] = {"url": url, "background": background}
        if new_window:
            params["newWindow"] = True
        if self._context_id is not None:
            params["browserContextId"] = self._context_id
        client = self._cdp_client_root or self.cdp_client
        result = await client.send.Target.createTarget(params=params)  # type: ignore[arg-type]
        return result["targetId"]
