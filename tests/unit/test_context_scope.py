"""browser-use's connection kept to its test's browser context (agent/browsers/context_scope.py), against a recorded browser:
what it sends is scoped or refused, what it hears is its own context's only."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from preview_qa.agent.browsers.context_scope import ContextScope, OutOfContext

OURS, THEIRS = "ctx-ours", "ctx-theirs"
TARGETS = [
    {"targetId": "page-1", "type": "page", "browserContextId": OURS},
    {"targetId": "page-2", "type": "page", "browserContextId": THEIRS},
    {"targetId": "frame-2", "type": "iframe", "browserContextId": THEIRS},
]


class Browser:
    """What the connection sent, and the answers of a browser with one page of ours and one of another context."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, dict[str, Any] | None, str | None]] = []

    async def send(self, method: str, params: dict[str, Any] | None, session_id: str | None) -> dict[str, Any]:
        self.sent.append((method, params, session_id))
        if method == "Target.getTargets":
            return {"targetInfos": TARGETS}
        if method == "Target.getTargetInfo":
            return {"targetInfo": next(t for t in TARGETS if t["targetId"] == (params or {})["targetId"])}
        return {}


def scoped() -> tuple[ContextScope, Browser]:
    browser = Browser()
    return ContextScope(OURS, browser.send), browser


def test_it_lists_and_attaches_only_its_own_context_targets() -> None:
    async def go() -> None:
        scope, browser = scoped()
        assert (await scope.command("Target.getTargets", None, None))["targetInfos"] == TARGETS[:1]
        await scope.command("Target.attachToTarget", {"targetId": "page-1", "flatten": True}, None)
        for method in ("Target.attachToTarget", "Target.activateTarget", "Target.closeTarget", "Target.getTargetInfo"):
            with pytest.raises(OutOfContext):
                await scope.command(method, {"targetId": "page-2"}, None)
        assert [m for m, _, _ in browser.sent] == ["Target.getTargets", "Target.attachToTarget"]
        assert scope.refused == ["Target.attachToTarget", "Target.activateTarget", "Target.closeTarget", "Target.getTargetInfo"]

    asyncio.run(go())


def test_a_target_it_has_not_heard_of_is_looked_up_before_it_is_touched() -> None:
    async def go() -> None:
        scope, browser = scoped()
        with pytest.raises(OutOfContext):
            await scope.command("Target.activateTarget", {"targetId": "frame-2"}, None)
        assert browser.sent == [("Target.getTargetInfo", {"targetId": "frame-2"}, None)]

    asyncio.run(go())


def test_browser_wide_commands_are_scoped_to_its_context_or_refused() -> None:
    async def go() -> None:
        scope, browser = scoped()
        await scope.command("Storage.getCookies", None, None)
        await scope.command("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": "/d"}, None)
        await scope.command("Target.createTarget", {"url": "about:blank"}, None)
        await scope.command("Network.clearBrowserCookies", None, "session-of-page-1")  # a page's own: its context
        assert [(p or {}).get("browserContextId") for _, p, _ in browser.sent] == [OURS, OURS, OURS, None]
        for method, params in [
            ("Storage.clearCookies", {"browserContextId": THEIRS}),
            ("Browser.close", None),
            ("Target.disposeBrowserContext", {"browserContextId": THEIRS}),
            ("Network.clearBrowserCookies", None),
        ]:
            with pytest.raises(OutOfContext):
                await scope.command(method, params, None)
        assert len(browser.sent) == 4 and len(scope.refused) == 4

    asyncio.run(go())


def test_instead_of_every_new_page_of_the_browser_it_is_attached_to_its_context_pages() -> None:
    async def go() -> None:
        scope, browser = scoped()
        assert await scope.command("Target.setAutoAttach", {"autoAttach": True, "flatten": True}, None) == {}
        assert scope.event("Target.targetCreated", {"targetInfo": TARGETS[1]}) is False
        assert scope.event("Target.targetCreated", {"targetInfo": TARGETS[0]}) is True
        await asyncio.sleep(0)
        assert browser.sent == [("Target.attachToTarget", {"targetId": "page-1", "flatten": True}, None)]

    asyncio.run(go())


def test_it_hears_only_of_its_own_targets_and_downloads() -> None:
    async def go() -> None:
        scope, browser = scoped()
        await scope.command("Target.getTargets", None, None)
        assert scope.event("Target.targetInfoChanged", {"targetInfo": TARGETS[1]}) is False
        assert scope.event("Target.targetDestroyed", {"targetId": "page-2"}) is False
        assert scope.event("Target.targetCrashed", {"targetId": "unknown"}) is False
        assert scope.event("Target.targetDestroyed", {"targetId": "page-1"}) is True
        assert scope.event("Browser.downloadWillBegin", {"frameId": "page-2", "guid": "g2"}) is False
        assert scope.event("Browser.downloadProgress", {"guid": "g2"}) is False
        assert scope.event("Browser.downloadWillBegin", {"frameId": "page-1", "guid": "g1"}) is True
        assert scope.event("Browser.downloadProgress", {"guid": "g1"}) is True
        assert scope.event("Target.attachedToTarget", {"sessionId": "s2", "targetInfo": TARGETS[1]}) is False
        await asyncio.sleep(0)
        assert browser.sent[-1] == ("Target.detachFromTarget", {"sessionId": "s2"}, None)  # let go of at once

    asyncio.run(go())
