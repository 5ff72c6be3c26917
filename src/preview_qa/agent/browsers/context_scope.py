"""browser-use's session kept to one browser context of a shared browser: every DevTools command it sends and every
event it hears passes here, so that it never attaches to, lists, focuses or closes another test's page, worker or
frame, never hears of another test's downloads, and scopes to its own context what it would do browser-wide."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

# (method, params, session id) -> the browser's answer, over the connection itself, unscoped
Send = Callable[[str, dict[str, Any] | None, str | None], Awaitable[dict[str, Any]]]

# Browser-wide commands that act on one context when given its id (browser-use sends them without one, meaning the
# whole browser, or for cookies the shared default context): the test's context id is set.
IN_CONTEXT = frozenset(
    {
        "Target.createTarget",
        "Browser.setDownloadBehavior",
        "Browser.grantPermissions",
        "Browser.resetPermissions",
        "Browser.setPermission",
        "Storage.getCookies",
        "Storage.setCookies",
        "Storage.clearCookies",
    }
)
# Commands on one target, named by its targetId: only on the test's own.
ON_TARGET = frozenset({"Target.attachToTarget", "Target.activateTarget", "Target.closeTarget", "Target.getTargetInfo"})
# Browser-wide commands that read or change nothing of another context.
HARMLESS = frozenset({"Target.setDiscoverTargets", "Target.detachFromTarget", "Browser.getVersion"})
TARGET_EVENTS = frozenset({"Target.targetCreated", "Target.targetInfoChanged", "Target.attachedToTarget"})
GONE_EVENTS = frozenset({"Target.targetDestroyed", "Target.targetCrashed", "Target.detachedFromTarget"})


class OutOfContext(RuntimeError):
    """A command browser-use sent that would reach beyond the test's own browser context; it was not sent."""


@dataclass
class ContextScope:
    """One browser-use connection's view of the browser: the targets of `context_id` only. A refused command raises
    OutOfContext and is kept in `refused` (the test reports each)."""

    context_id: str
    send: Send  # the connection's own send, which the scope wraps
    ours: set[str] = field(default_factory=set)  # targets of the test's context
    theirs: set[str] = field(default_factory=set)  # targets of any other context
    attached: set[str] = field(default_factory=set)  # our pages attached (or being attached) over this connection
    downloads: set[str] = field(default_factory=set)  # the guids of downloads begun in the test's pages
    refused: list[str] = field(default_factory=list)
    auto_attach: bool = False  # browser-use asked to be attached to every new page: it is, to each of its context's
    _tasks: set[asyncio.Task[Any]] = field(default_factory=set)

    async def command(self, method: str, params: dict[str, Any] | None, session_id: str | None) -> dict[str, Any]:
        """Send `method` scoped to the test's context, or refuse it."""
        params = dict(params or {})
        if method == "Target.setAutoAttach" and session_id is None:
            # Browser-wide, Chrome would attach this connection to every new page of every context; instead each new
            # page of the test's context is attached as it is announced (see `event`), the others never are.
            self.auto_attach = bool(params.get("autoAttach"))
            for target in self.ours - self.attached:
                self._attach(target)
            return {}
        if method in ON_TARGET and "targetId" in params:
            if not await self._is_ours(params["targetId"]):
                raise self._refuse(method, "a target of another browser context")
            if method == "Target.attachToTarget":
                self.attached.add(params["targetId"])
        elif method in IN_CONTEXT and session_id is None:
            if params.setdefault("browserContextId", self.context_id) != self.context_id:
                raise self._refuse(method, "another browser context")
        elif method == "Target.getTargets":
            answer = await self.send(method, params, session_id)
            return {**answer, "targetInfos": [t for t in answer.get("targetInfos", []) if self._note(t)]}
        elif session_id is None and method not in HARMLESS and method not in ON_TARGET:
            raise self._refuse(method, "the whole browser")
        return await self.send(method, params, session_id)

    def event(self, method: str, params: dict[str, Any]) -> bool:
        """Whether browser-use may hear this event: only of the test's own targets and downloads."""
        if method in TARGET_EVENTS:
            info = params.get("targetInfo", {})
            ours = self._note(info)
            if not ours and method == "Target.attachedToTarget":  # never asked for; let go of it at once
                self._spawn(self.send("Target.detachFromTarget", {"sessionId": params.get("sessionId")}, None))
            elif ours and self.auto_attach and info.get("type") == "page" and info["targetId"] not in self.attached:
                self._attach(info["targetId"])
            return ours
        if method in GONE_EVENTS:
            target = params.get("targetId")
            if target is None:  # a session of this connection's, named by its id alone
                return True
            self.attached.discard(target)
            return target in self.ours
        if method == "Browser.downloadWillBegin":  # Chrome tells every connection that asked of every download
            if params.get("frameId") in self.ours:
                self.downloads.add(params.get("guid", ""))
                return True
            return False
        if method == "Browser.downloadProgress":
            return params.get("guid") in self.downloads
        return True  # an event of a session this connection attached: one of the test's own targets

    def _note(self, info: dict[str, Any]) -> bool:
        target, ours = info.get("targetId", ""), info.get("browserContextId") == self.context_id
        (self.ours if ours else self.theirs).add(target)
        return ours

    async def _is_ours(self, target: str) -> bool:
        if target not in self.ours and target not in self.theirs:
            try:
                self._note((await self.send("Target.getTargetInfo", {"targetId": target}, None))["targetInfo"])
            except Exception:
                return False  # gone, or never there: refused like another context's
        return target in self.ours

    def _attach(self, target: str) -> None:
        self.attached.add(target)
        self._spawn(self.send("Target.attachToTarget", {"targetId": target, "flatten": True}, None))

    def _spawn(self, command: Awaitable[Any]) -> None:
        """Send without waiting: events are heard on the connection's reading task, which would wait for itself."""

        async def quietly() -> None:
            with contextlib.suppress(Exception):  # a target gone before it was attached (or let go of): none of it seen
                await command

        task = asyncio.get_running_loop().create_task(quietly())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _refuse(self, method: str, what: str) -> OutOfContext:
        self.refused.append(method)
        return OutOfContext(f"{method} would act on {what}, outside the test's own browser context")
