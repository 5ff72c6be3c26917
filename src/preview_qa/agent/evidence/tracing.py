"""A Playwright trace per test: started on the test's fresh context, one group per agent step, handed on as an event."""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from preview_qa.events import Event, Observed, TraceRecorded
from preview_qa.results import error_line

if TYPE_CHECKING:
    from playwright.async_api import BrowserContext

STOP_TIMEOUT_S = 10.0
T = TypeVar("T")


class TestTrace:
    """Playwright's tracing on one test's context. browser-use drives the page over CDP, not through Playwright, so
    its actions are not Playwright actions: each agent step becomes a group the trace viewer lists, around the
    network and console of that step; a replay's actions are Playwright's own, with DOM snapshots. No screencast:
    Chromium would encode a frame at each repaint, a third of an agent run's CPU; a written trace's film strip is the
    test's own pictures instead (reporters/output/film_strip.py); a run with secrets keeps no pixels in its trace
    (`with_screenshots`). The text in the trace is redacted on its way out (secrets/trace_zip.py)."""

    __test__ = False

    def __init__(self, name: str, with_screenshots: bool, emit: Callable[[Event], None]):
        self.name = name
        self.with_screenshots = with_screenshots
        self.emit = emit
        self._context: BrowserContext | None = None
        self._open_group = False

    async def start(self, context: BrowserContext) -> None:
        """Trace the context from here on; a trace that cannot start is an event, and the test runs on without one."""
        try:
            await context.tracing.start(title=self.name, screenshots=False, snapshots=True, sources=False)
            self._context = context
        except Exception as e:
            self._not_written(e)

    async def group(self, label: str) -> None:
        if self._context is None:
            return
        await self.group_end()
        with contextlib.suppress(Exception):  # a step whose browser went away still ends; the trace says what it saw
            await self._context.tracing.group(label)
            self._open_group = True

    async def group_end(self) -> None:
        if self._context is not None:
            await self.group_end_on(self._context)

    async def group_end_on(self, context: BrowserContext) -> None:
        if self._open_group:
            self._open_group = False
            with contextlib.suppress(Exception):
                await context.tracing.group_end()

    async def grouped(self, label: str, work: Awaitable[T]) -> T:
        """`work`, as one group of the trace (the checks phase: one row a check inside it)."""
        await self.group(label)
        try:
            return await work
        finally:
            await self.group_end()

    async def stop(self, write: bool = True) -> None:
        """Stop tracing and hand the zip on (an event: the reporters decide whether to keep it), or, when it is not to
        be written (a run that passed, under --trace retain-on-failure), say so in the same event without a zip; a
        trace that could not be written is said so, never dropped silently."""
        context, self._context = self._context, None
        if context is None:
            return
        if not write:
            try:
                await self.group_end_on(context)
                await _bounded(context.tracing.stop())  # discarded by Playwright: no zip made, read or redacted
                self.emit(TraceRecorded(name=self.name, zip=None, with_screenshots=self.with_screenshots))
            except Exception as e:
                self._not_written(e)
            return
        fd, path = tempfile.mkstemp(prefix="trace-", suffix=".zip")
        os.close(fd)
        try:
            await self.group_end_on(context)
            await _bounded(context.tracing.stop(path=path))
            with open(path, "rb") as f:
                data = f.read()
            self.emit(TraceRecorded(name=self.name, zip=data, with_screenshots=self.with_screenshots))
        except Exception as e:
            self._not_written(e)
        finally:
            with contextlib.suppress(OSError):
                os.remove(path)

    def _not_written(self, error: Exception) -> None:
        self.emit(
            Observed(
                name=self.name,
                kind="trace_not_written",
                error=True,
                detail={"why": f"{type(error).__name__}: {error_line(error)}"},
            )
        )

    def around_step(
        self, on_start: Callable[[Any], Awaitable[None]], on_end: Callable[[Any], Awaitable[None]]
    ) -> tuple[Callable[[Any], Awaitable[None]], Callable[[Any], Awaitable[None]]]:
        """The agent's step hooks, each step inside its own group named by its number."""
        count = 0

        async def start(agent: Any) -> None:
            nonlocal count
            count += 1
            await self.group(f"agent step {count}")
            await on_start(agent)

        async def end(agent: Any) -> None:
            await on_end(agent)
            await self.group_end()

        return start, end


async def _bounded(stop: Awaitable[None]) -> None:
    await asyncio.wait_for(stop, STOP_TIMEOUT_S)
