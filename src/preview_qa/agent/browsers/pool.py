"""Browsers kept for the run, Playwright Test's way: one Chromium per worker, reused test after test, and for each test a
fresh browser context (its own cookies, storage, cache and service workers) that is thrown away afterwards. A browser
that broke, or in which a test left anything outside its own context, is retired, never handed to the next test.
Browsers start (in turns, tried twice, their processes tracked by profile folder) and end through agent/browsers/launch.py.

Tests share a browser, each in its own context: a replay drives its context through Playwright alone, and an agent's
browser-use session is kept to its test's context (agent/browsers/context_scope.py), so a run at --concurrency 4 starts one
Chromium, not four (on two cores a launch costs more than a replayed test, and each Chromium its own memory). Every
browser is launched by Playwright with a DevTools port for browser-use (agent/browsers/launch.py), so replays and agent tests
take any browser of the pool, and a run of replays never imports browser-use."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from preview_qa.agent.browsers.launch import (
    CLOSE_BUDGET_S,
    CLOSE_TIMEOUT_S,
    BrowserProcesses,
    BrowserSetup,
    ask,
    close_browser,
    start_browser,
)
from preview_qa.agent.browsers.leftovers import DIED, leftovers
from preview_qa.agent.browsers.remote import connect_browser, stopped_answering, watch
from preview_qa.results import Emulation, Viewport

if TYPE_CHECKING:
    from playwright.async_api import Browser, BrowserContext, Page, Playwright


DESKTOP = Viewport(width=1280, height=800)  # the default desktop's page, for the agent and its replay alike
SEEN = "() => [navigator.userAgent, navigator.language]"
CONTEXT_TIMEOUT_S = 30.0  # a browser that makes no new context by then is wedged: its test errors, the browser is retired


def context_options(emulation: Emulation | None) -> dict[str, Any]:
    """Playwright's options for a test's context: always a viewport, the default desktop's unless the test (or the
    recording a replay follows) gives one, so that every page of the context, the agent's, a replay's and any tab they
    open, has that size on every Chromium build. Without one, a page is the window's size less whatever the build draws
    around it: 1280x713 on Debian's headless Chromium 156 in a 1280x800 window, where browser-use's agent saw 1280x800.
    A device brings its scale, mobile, touch and user agent; a replay the recording's user agent and locale too."""
    e = emulation or Emulation()
    options = {
        "viewport": (e.viewport or DESKTOP).model_dump(),
        "device_scale_factor": e.device_scale_factor,
        "is_mobile": e.is_mobile,
        "has_touch": e.has_touch,
        "locale": e.locale,
        "timezone_id": e.timezone,
        "color_scheme": e.color_scheme and e.color_scheme.value,
        "user_agent": e.user_agent,
    }
    return {k: v for k, v in options.items() if v is not None}


def environment(emulation: Emulation | None, seen: tuple[str, str]) -> Emulation:
    """What the pages of a context made with `emulation` see: its emulation on the default desktop's viewport and
    scale, and the user agent and locale its first page reported (`seen`, the browser's own where it sets none)."""
    e = emulation or Emulation()
    return e.model_copy(
        update={
            "viewport": e.viewport or DESKTOP,
            "device_scale_factor": e.device_scale_factor or 1.0,
            "is_mobile": bool(e.is_mobile),
            "has_touch": bool(e.has_touch),
            "user_agent": e.user_agent or seen[0],
            "locale": e.locale or seen[1],
        }
    )


@dataclass
class FreshContext:
    """A context nobody used yet, its first page, its id in the DevTools protocol, and what that page reported."""

    context: BrowserContext
    page: Page
    context_id: str
    seen: tuple[str, str]  # navigator.userAgent and navigator.language


@dataclass(eq=False)
class PooledBrowser:
    """One running Chromium (its processes found by its profile folder, or a remote one's none) and Playwright's
    connection to it."""

    processes: BrowserProcesses | None  # None: a remote browser (--cdp-url), never ended by the run
    cdp_url: str  # where browser-use's sessions connect
    browser: Browser
    ready: FreshContext | None = None  # the next test's context (the default desktop's), made while no test waited
    tests: int = 0
    launch_s: float = 0.0  # how long it took to start (once per worker, as in Playwright Test)
    up_at: float = 0.0  # when it was up (time.monotonic)
    holders: int = 0  # leases running in it now
    leaving: int = 0  # leases whose test ended and whose leftovers are being checked: nobody joins meanwhile
    settling: bool = False  # its last holder's cleanup is checking it: nobody joins meanwhile
    doomed: str | None = None  # why it is retired once its last holder is done (nobody joins a doomed browser)
    # What a context's first page reported, by the user agent and locale its options set: the same for every context
    # of this browser made with them, so read once (a round trip and a script fewer per test)
    seen: dict[tuple[str | None, str | None], tuple[str, str]] = field(default_factory=dict)
    failed_tries: list[tuple[int, str]] = field(default_factory=list)  # of a start no test asked for: told to its first
    gone: set[str] = field(default_factory=set)  # its contexts closed (or being closed): Chromium lists their pages a while
    remote: str | None = None  # --cdp-url: the endpoint it was reached at
    theirs: set[str] = field(default_factory=set)  # a remote browser's targets and contexts from before the run's
    lost: str | None = None  # why a remote browser is gone for the run (it stopped answering)
    watching: asyncio.Task[None] | None = None  # a remote browser's ping (agent/browsers/remote.py)

    @property
    def connected(self) -> bool:
        return self.browser.is_connected()


@dataclass
class Lease:
    """A test's share of a pooled browser: a context nobody used before, and its first page."""

    pooled: PooledBrowser
    context: BrowserContext
    page: Page
    context_id: str  # the context's id in the DevTools protocol, for the pages browser-use opens
    environment: Emulation  # what its pages see: viewport, scale, user agent, locale... (kept with a recording)
    tainted: list[str] = field(default_factory=list)  # why the browser must not be reused (set during the test)
    # what must end before its context closes (browser-use's session, disconnected after the test): each bounded
    before_close: list[Callable[[], Awaitable[object]]] = field(default_factory=list)
    launch_s: float = 0.0  # the seconds of the lease spent starting its browser (0 for a browser already running)

    @property
    def cdp_url(self) -> str:
        return self.pooled.cdp_url

    @property
    def lost(self) -> str | None:
        """Why its remote browser is gone, if it is: the test's error, whatever else failed with it."""
        pooled = self.pooled
        if pooled.lost is None and pooled.remote is not None and not pooled.connected:  # heard before its ping was
            pooled.lost = stopped_answering(pooled.remote)
        return pooled.lost

    @property
    def browser(self) -> Browser:
        return self.pooled.browser


class BrowserPool:
    """At most `size` browsers; `lease()` gives a test a fresh context in an idle one (starting one if none is idle and
    fewer than `size` run), and cleans up after the test in the background."""

    def __init__(
        self,
        playwright: Callable[[], Awaitable[Playwright]],
        setup: BrowserSetup,
        size: int,
        gate: asyncio.Semaphore,
    ):
        self.playwright, self.setup, self.size, self.gate = playwright, setup, max(1, size), gate
        self._running: set[PooledBrowser] = set()
        self._starting = 0  # browsers starting: the next leases wait to join them
        self._changed = asyncio.Condition()
        self._cleanups: set[asyncio.Task[None]] = set()
        self._closing = False  # the run has ended: no next test's context is made, nor a browser checked for one
        self._making: set[asyncio.Task[FreshContext]] = set()  # next tests' contexts being made (cancelled by close)
        self._warming: asyncio.Task[PooledBrowser] | None = None  # the first browser, started before a test asked
        self._warm_tries: list[tuple[int, str]] = []  # its failed tries, until a test hears of them
        self.launches = 0
        self.retired: list[str] = []  # why each retired browser was retired (for the bench and the tests)

    @contextlib.asynccontextmanager
    async def lease(
        self,
        on_failed_try: Callable[[int, str], None] = lambda attempt, reason: None,
        emulation: Emulation | None = None,
    ) -> AsyncIterator[Lease]:
        """A fresh context for one test, emulating its device if any, in a browser it may share with other tests. A
        browser started for it reports each failed try to `on_failed_try`."""
        asked = time.monotonic()
        pooled = await self._checkout(on_failed_try)
        ready, pooled.ready = pooled.ready, None  # taken at once: two shared leases never get the same context
        try:
            if ready is not None and environment(emulation, ready.seen) != environment(None, ready.seen):
                pooled.gone.add(ready.context_id)
                with contextlib.suppress(Exception):  # one left open retires the browser after the test (leftovers)
                    await ready.context.close()
                ready = None
            fresh = ready or await self._new_context(pooled, context_options(emulation))
        except BaseException as e:
            if isinstance(e, Exception):  # not a cancellation: the browser's own trouble
                pooled.doomed = pooled.doomed or "its next context could not be made"
            pooled.leaving += 1
            await self._check_out_of(pooled, None)
            raise
        launch_s = 0.0 if pooled.tests else max(0.0, min(pooled.launch_s, pooled.up_at - asked))  # what it waited of it
        shows = environment(emulation, fresh.seen)
        lease = Lease(pooled, fresh.context, fresh.page, fresh.context_id, shows, launch_s=launch_s)
        pooled.tests += 1
        try:
            yield lease
        finally:
            pooled.leaving += 1  # at once: no test joins the browser before what this one left is checked
            task = asyncio.get_running_loop().create_task(self._check_in(lease))
            self._cleanups.add(task)
            task.add_done_callback(self._cleanups.discard)

    def warm(self) -> None:
        """Start the run's first browser now, before its first test asks for one: the Playwright driver's and
        Chromium's start (0.6 to 1 s) then go on while the run checks that the preview answers. The first test waits
        for it, hears of its failed tries, and errors as its own start would if it does not come up."""
        if self._warming is None and not self._running and not self._starting:
            self._starting += 1
            self._warming = asyncio.get_running_loop().create_task(self._warm())
            self._warming.add_done_callback(lambda task: task.cancelled() or task.exception())  # raised to a test

    async def _warm(self) -> PooledBrowser:
        return await self._started(lambda attempt, reason: self._warm_tries.append((attempt, reason)), warm=True)

    async def _started(self, on_failed_try: Callable[[int, str], None], warm: bool) -> PooledBrowser:
        """A browser launched as counted in `_starting`, then running: held by the test that launched it, or, a warm
        start, free with its failed tries for its first test; its waiters are told either way."""
        try:
            pooled = await self._launch(on_failed_try)
        except BaseException:
            async with self._changed:
                self._starting -= 1
                self._changed.notify_all()
            raise
        async with self._changed:
            self._starting -= 1
            if warm:
                pooled.failed_tries, self._warm_tries = self._warm_tries, []
            else:
                pooled.holders = 1
            self._running.add(pooled)
            self._changed.notify_all()
        return pooled

    async def close(self) -> None:
        """Wait for the cleanups still running (each closes its test's context), then stop every browser. No test
        follows: a cleanup makes no next context and checks no browser for one (about 0.3 s at the end of every run)."""
        self._closing = True
        for making in [*self._making, *([self._warming] if self._warming is not None else [])]:
            making.cancel()
        if self._warming is not None:
            await asyncio.wait({self._warming}, timeout=CLOSE_BUDGET_S)
        if self._cleanups:
            await asyncio.wait(list(self._cleanups), timeout=CLOSE_TIMEOUT_S * 2)
        for pooled in list(self._running):
            await self._retire(pooled, None)

    async def _checkout(self, on_failed_try: Callable[[int, str], None]) -> PooledBrowser:
        async with self._changed:
            while True:
                if (warming := self._warming) is not None and warming.done():  # the first test hears how it went
                    self._warming = None
                    if warming.cancelled() or warming.exception() is not None:
                        for attempt, reason in self._warm_tries:
                            on_failed_try(attempt, reason)
                        self._warm_tries = []
                        raise warming.exception() or asyncio.CancelledError()
                for pooled in [b for b in self._running if b.holders == 0 and not b.settling and not b.connected]:
                    await self._retire(pooled, "it disconnected while idle", notify=False)
                free = [b for b in self._running if not (b.settling or b.leaving or b.doomed) and b.connected]
                if free:
                    pooled = max(free, key=lambda b: b.holders)  # a lease joins a browser already in use
                    pooled.holders += 1
                    for attempt, reason in pooled.failed_tries:  # a warm start's, told to its first test
                        on_failed_try(attempt, reason)
                    pooled.failed_tries = []
                    return pooled
                room = len(self._running) + self._starting < self.size
                # a browser starting or being checked that this lease could join: waiting for it costs no launch
                soon = [b for b in self._running if (b.settling or b.leaving) and not b.doomed]
                if room and not (self._starting or soon):
                    self._starting += 1
                    break
                await self._changed.wait()
        return await self._started(on_failed_try, warm=False)

    async def _check_in(self, lease: Lease) -> None:
        """After a test: close its context and check that it left nothing outside it; once the browser's last holder is
        done, reuse it only if nothing of any test is left in it."""
        for close in lease.before_close:  # first: a session would open a blank page (in no context of ours) once its tab closes
            with contextlib.suppress(Exception):
                await asyncio.wait_for(close(), CLOSE_TIMEOUT_S * 2)
        lease.pooled.gone.add(lease.context_id)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(lease.context.close(), CLOSE_TIMEOUT_S)
        if lease.tainted:
            lease.pooled.doomed = lease.pooled.doomed or "; ".join(lease.tainted)
        await self._check_out_of(lease.pooled, lease.context_id)

    async def _check_out_of(self, pooled: PooledBrowser, closed: str | None) -> None:
        """One holder fewer, whose context `closed` is checked: anything it left outside it dooms the browser (retired
        once its other holders are done); the last one out checks the whole browser and makes the next test's context."""
        async with self._changed:
            pooled.holders -= 1
            last = pooled.settling = pooled.holders == 0
        if self._closing:  # every browser is stopped next: nobody is left to protect or to make a context for
            return
        why = [pooled.doomed] if pooled.doomed else []
        if not pooled.connected:
            why.append(DIED)
        if not why and (last or closed is not None):  # a lease whose context was never made left none
            why += await leftovers(pooled.browser, None if last else closed, pooled.gone, pooled.theirs)
        if not last:
            async with self._changed:
                pooled.doomed = pooled.doomed or "; ".join(why) or None
                pooled.leaving -= 1
                self._changed.notify_all()
            return
        pooled.leaving -= 1
        if not why and not self._closing:
            pooled.ready = await self._next_context(pooled)
        if self._closing:
            return
        if why or pooled.ready is None:
            await self._retire(pooled, "; ".join(why) or "its next context could not be made")
            return
        async with self._changed:
            pooled.settling = False
            self._changed.notify_all()

    async def _next_context(self, pooled: PooledBrowser) -> FreshContext | None:
        """The next test's context, made while no test runs in the browser (None if it could not be made, or the run
        ended meanwhile)."""
        making = asyncio.get_running_loop().create_task(self._new_context(pooled, context_options(None)))
        self._making.add(making)
        try:
            await asyncio.wait({making})
        finally:
            self._making.discard(making)
            making.cancel()  # only if this cleanup itself was cancelled: it is done otherwise
        return None if making.cancelled() or making.exception() is not None else making.result()

    async def _new_context(self, pooled: PooledBrowser, options: dict[str, Any]) -> FreshContext:
        try:
            async with asyncio.timeout(CONTEXT_TIMEOUT_S):  # Playwright bounds none of these calls
                return await self._opened(pooled, options)
        except TimeoutError:
            raise TimeoutError(f"the browser made no new context within {CONTEXT_TIMEOUT_S:g} s") from None

    async def _opened(self, pooled: PooledBrowser, options: dict[str, Any]) -> FreshContext:
        context = await pooled.browser.new_context(**options)  # preview credentials: agent/guards/network.py
        page = await context.new_page()
        [info] = await ask(context.new_cdp_session(page), "Target.getTargetInfo")
        key = (options.get("user_agent"), options.get("locale"))
        if key not in pooled.seen:
            user_agent, locale = await page.evaluate(SEEN)
            pooled.seen[key] = (str(user_agent), str(locale))
        return FreshContext(context, page, str(info["targetInfo"]["browserContextId"]), pooled.seen[key])

    async def _launch(self, on_failed_try: Callable[[int, str], None]) -> PooledBrowser:
        """Start a browser (agent/browsers/launch.py: by Playwright, in turns, tried twice), or connect to the remote
        one (agent/browsers/remote.py), watched from then on."""
        clock = time.monotonic()
        if (url := self.setup.cdp_url) is not None:
            browser, ws, theirs = await connect_browser(await self.playwright(), url, self.setup.start_timeout_s)
            pooled = PooledBrowser(None, ws, browser, remote=url, theirs=theirs)
            pooled.watching = asyncio.get_running_loop().create_task(watch(browser, url, lambda why: self._lost(pooled, why)))
        else:
            started = await start_browser(await self.playwright(), self.setup, self.gate, on_failed_try)
            pooled = PooledBrowser(started.processes, started.cdp_url, started.browser)
        pooled.up_at = time.monotonic()
        pooled.launch_s = pooled.up_at - clock
        self.launches += 1
        return pooled

    async def _retire(self, pooled: PooledBrowser, why: str | None, notify: bool = True) -> None:
        if why is not None:
            self.retired.append(why)
        self._running.discard(pooled)
        await self._stop(pooled)
        if notify:
            async with self._changed:
                self._changed.notify_all()

    @staticmethod
    def _lost(pooled: PooledBrowser, why: str) -> None:
        pooled.lost = pooled.doomed = why

    @staticmethod
    async def _stop(pooled: PooledBrowser) -> None:
        if pooled.watching is not None:
            pooled.watching.cancel()
        if pooled.remote is not None and pooled.ready is not None:  # the remote browser outlives the run: none of its pages do
            with contextlib.suppress(Exception):
                await asyncio.wait_for(pooled.ready.context.close(), CLOSE_TIMEOUT_S)
        await close_browser(pooled.browser, pooled.processes)  # a remote one's: only the connection ends
