"""Starting and ending Chromium: our flags, each browser's processes found by its profile folder and killed at the end,
a browser that does not come up killed and started once more, in turns. Every browser is launched by Playwright alone,
with a DevTools port on the loopback for browser-use's sessions (agent/adapter/connect.py), so a run of replays never
imports browser-use and an agent's run does not wait for browser-use's own launcher (issue #28)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import psutil

from preview_qa.config import BROWSER_START_TIMEOUT_S
from preview_qa.results import error_line

if TYPE_CHECKING:
    from playwright.async_api import Browser, CDPSession, Playwright

START_TRIES = 2
# Starting Chromium takes seconds of CPU: started all at once on 2 cores, 8 browsers each needed over 30 s (load 15).
START_AT_ONCE = max(2, os.cpu_count() or 2)
SLOT_WAIT_S = 120.0  # at most, for a turn to start; past it the browser starts anyway
CLOSE_TIMEOUT_S = 3.0  # each polite step of closing (a browser's Playwright connection, a test's browser-use session) at most
GONE_WAIT_S = 3.0  # for killed processes to leave the process table
CLOSE_BUDGET_S = 2 * CLOSE_TIMEOUT_S + GONE_WAIT_S + 1.0
PROFILE_FLAG = "--user-data-dir="
BROWSER_ARGS = [
    "--no-startup-window",
    "--disable-background-networking",
    "--disable-component-update",
    # Chromium's own sign-in (accounts.google.com) and on-demand component updates (update.googleapis.com) start even
    # with --disable-background-networking and --disable-component-update: both are pointed at port 9, which Chromium
    # refuses to connect to (ERR_UNSAFE_PORT), so nothing leaves. A page's own links to these hosts are not affected.
    "--gaia-url=http://127.0.0.1:9",
    "--component-updater=url-source=http://127.0.0.1:9",
    "--disable-sync",
    "--disable-quic",
    "--no-first-run",
    "--disable-dev-shm-usage",
    "--enable-blink-features=ComputedAccessibilityInfo",
]  # accessible names for the replay (agent/replay/player.py)
# Chromium keeps only a switch's last value, so our --disable-features carries Playwright's list too (its
# chromiumSwitches.ts, for the Playwright we pin) and Playwright's own is left out by its exact text: if an upgrade
# changes it, the test of the launch (tests/e2e/test_replay_launch.py) sees two and fails.
PLAYWRIGHT_DISABLED_FEATURES = [
    "AvoidUnnecessaryBeforeUnloadCheckSync",
    "DestroyProfileOnBrowserClose",
    "HttpsUpgrades",
    "HttpsFirstBalancedModeAutoEnable",
    "LensOverlay",
    "MediaRouter",
    "PaintHolding",
    "ThirdPartyStoragePartitioning",
    "AvoidCorsURLLoaderRestartOnRedirect",
    "TcpPortRandomizationWin",
    "OptimizationHints",
    "NetworkTimeServiceQuerying",
    "AimEnabled",
    "PreconnectToSearch",
    "msForceBrowserSignIn",
    "msEdgeUpdateLaunchServicesPreferredVersion",
]
DISABLED_FEATURES = [
    "NetworkTimeServiceQuerying",  # else Chromium asks Google for the time on its own
    # Every window of a headless Chromium (one a browser context) loaded the address bar's popup, twice over, in
    # renderers of its own: 0.5 CPU-s a context, most of what a context cost (docs/performance.md), for a UI never shown
    "WebUIOmniboxPopup",
    "WebUIOmniboxAimPopup",
]
WINDOW = {
    "width": 1280,
    "height": 800,
}  # a headed browser's window; each context emulates its pages' size (agent/browsers/pool.py)


@dataclass
class BrowserSetup:
    """How the run's browsers are launched and what each test may reach."""

    chromium: str
    headless: bool = True
    extra_headers: dict[str, str] = field(default_factory=dict)  # to the preview's origin only (credentials included)
    browsers: int = 1  # at most this many run at once: one per test running at the same time (--concurrency)
    measure_cpu: bool = False  # per-phase CPU in the test's "timings" event (bench/breakdown.py; walks the process table)
    trace: bool = False  # record a Playwright trace of each test (--trace; the reporters decide which to keep)
    start_timeout_s: float = BROWSER_START_TIMEOUT_S  # one try of a browser's start (--browser-start-timeout)
    cdp_url: str | None = None  # --cdp-url: every browser is this remote one, connected to (agent/browsers/remote.py)

    @property
    def start_budget_s(self) -> float:
        """The most a browser's start can take, failing: its turn, and each try with its cleanup."""
        return SLOT_WAIT_S + START_TRIES * (self.start_timeout_s + CLOSE_BUDGET_S)


def sandboxed() -> bool:
    """Whether Chromium runs in its own sandbox: it needs user namespaces, which neither root nor a container's seccomp
    allows."""
    in_container = os.getenv("IN_DOCKER", "").lower()[:1] in ("t", "y", "1") or Path("/.dockerenv").exists()
    return os.geteuid() != 0 and not in_container


# What browser-use's own launcher did for an agent's browser, kept: pages see no automation flag (navigator.webdriver),
# as in a person's browser (a site's bot check would otherwise stop the agent), and browser-use's sessions connect to
# a DevTools port on the loopback that Chromium picks and writes to its profile folder.
AGENT_ARGS = ["--disable-blink-features=AutomationControlled", "--remote-debugging-port=0"]
PORT_FILE = "DevToolsActivePort"
BROWSER_PATH = re.compile(r"/devtools/browser/[0-9a-f-]{36}")


def disable_features(features: list[str]) -> str:
    return "--disable-features=" + ",".join(features)


def playwright_args() -> list[str]:
    """Our flags for a browser Playwright launches, with one --disable-features: Playwright's features and ours."""
    size = f"--window-size={WINDOW['width']},{WINDOW['height']}"
    features = list(dict.fromkeys(PLAYWRIGHT_DISABLED_FEATURES + DISABLED_FEATURES))
    return [*BROWSER_ARGS, disable_features(features), *AGENT_ARGS, size]


# Playwright's own --disable-features, replaced by ours (playwright_args)
PLAYWRIGHT_IGNORED_ARGS = ["--enable-automation", disable_features(PLAYWRIGHT_DISABLED_FEATURES)]


class BrowserStartError(Exception):
    """The browser did not come up in any of its tries; the message is the test's reason."""


class BrowserProcesses:
    """Every process of the browsers whose profile folder lies under `root`, wherever it was re-parented, and each
    process those started: Chromium passes its profile folder to all its helper processes."""

    def __init__(self, root: str):
        self.root = os.path.abspath(root)
        self._seen: dict[int, psutil.Process] = {}  # a helper outlives its parent re-parented, no longer findable

    def find(self) -> list[psutil.Process]:
        """The processes running now, remembered for `kill`."""
        children: dict[int, list[psutil.Process]] = {}
        found: list[psutil.Process] = []
        for proc in psutil.process_iter(["ppid", "cmdline"]):
            children.setdefault(proc.info["ppid"] or 0, []).append(proc)
            if any(self._ours(arg) for arg in proc.info["cmdline"] or ()):
                found.append(proc)
        seen, queue = {p.pid for p in found}, list(found)
        while queue:  # descendants too: a browser (or a wrapper standing in for one) may start helpers without the flag
            for child in children.get(queue.pop().pid, []):
                if child.pid not in seen:
                    seen.add(child.pid)
                    found.append(child)
                    queue.append(child)
        self._seen.update((p.pid, p) for p in found)
        return found

    def _ours(self, arg: str) -> bool:
        if not arg.startswith(PROFILE_FLAG):
            return False
        path = os.path.abspath(arg[len(PROFILE_FLAG) :])
        return path == self.root or path.startswith(self.root + os.sep)

    def kill(self) -> list[psutil.Process]:
        """SIGKILL every process running now or found before, without awaiting anything (psutil refuses to signal a
        PID that was reused by another process since)."""
        self.find()
        procs = list(self._seen.values())
        for proc in procs:
            with contextlib.suppress(psutil.Error):
                proc.kill()
        return procs

    async def end(self, wait_s: float = GONE_WAIT_S) -> list[int]:
        """Kill every process and wait until they are gone; the PIDs still running after `wait_s` (normally none)."""
        procs = self.kill()
        deadline = time.monotonic() + wait_s
        while True:
            alive = [p for p in procs if _running(p)]
            if not alive or time.monotonic() >= deadline:
                return [p.pid for p in alive]
            await asyncio.sleep(0.05)


class StartedHere:
    """The processes this run started itself, found by parentage and not by command line: a browser launched through
    a wrapper that does not pass Chromium's flags on has no profile folder to be found by."""

    DRIVER = "run-driver"  # Playwright's driver, also our child: stopped on its own, after the browsers

    def __init__(self) -> None:
        self._before = {p.pid for p in _children(psutil.Process())}

    def kill(self) -> list[psutil.Process]:
        """SIGKILL every process started since, and theirs (the Playwright driver aside), without awaiting anything."""
        found = [p for p in _children(psutil.Process()) if p.pid not in self._before and not self._driver(p)]
        for proc in list(found):
            with contextlib.suppress(psutil.Error):
                found += proc.children(recursive=True)
        for proc in found:
            with contextlib.suppress(psutil.Error):
                proc.kill()
        return found

    def _driver(self, proc: psutil.Process) -> bool:
        try:
            return self.DRIVER in proc.cmdline()
        except psutil.Error:
            return False


def _children(proc: psutil.Process) -> list[psutil.Process]:
    try:
        return list(proc.children())
    except psutil.Error:
        return []


def _running(proc: psutil.Process) -> bool:
    """Still on the process table and not merely a zombie waiting for its parent to collect it."""
    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def start_gate() -> asyncio.Semaphore:
    """One per run: how many browsers start at the same time."""
    return asyncio.Semaphore(START_AT_ONCE)


@contextlib.asynccontextmanager
async def _turn(gate: asyncio.Semaphore) -> AsyncIterator[None]:
    try:
        await asyncio.wait_for(gate.acquire(), SLOT_WAIT_S)
    except TimeoutError:  # a bound on waiting, not a failure: start without a turn
        yield
        return
    try:
        yield
    finally:
        gate.release()


async def start_browser(
    playwright: Playwright, setup: BrowserSetup, gate: asyncio.Semaphore, on_failed_try: Callable[[int, str], None]
) -> Launched:
    """Start a browser in its turn at `gate`; one that does not come up within the setup's start timeout is killed and
    started again, START_TRIES times in all, else BrowserStartError."""
    reasons: list[str] = []
    for attempt in range(1, START_TRIES + 1):
        launch = PlaywrightLaunch(playwright, setup)
        started = False
        clock = time.monotonic()
        try:
            async with _turn(gate), asyncio.timeout(setup.start_timeout_s):
                clock = time.monotonic()  # from its turn on
                browser = await launch.start()
            started = True
            return browser
        except Exception as e:  # TimeoutError included: ours or Playwright's
            reason = _start_failure(e, min(time.monotonic() - clock, setup.start_timeout_s), launch.running())
            reasons.append(reason)
            on_failed_try(attempt, reason)
        finally:
            if not started:  # also when cancelled half-way: nothing of this try may outlive it
                await launch.abandon()
    raise BrowserStartError(f"the browser did not start: {'; '.join(dict.fromkeys(reasons))} ({START_TRIES} tries)")


@dataclass
class Launched:
    """A running browser: Playwright's connection, its processes, and the DevTools URL browser-use's sessions use."""

    browser: Browser
    processes: BrowserProcesses
    cdp_url: str


class PlaywrightLaunch:
    """A browser launched by Playwright with our flags (no browser-use involved). Playwright makes the profile folder
    itself, in its driver's temp folder (the run's folder: agent/browser_agents.py); once the browser is up, its
    processes are found by that folder, read from the browser process's command line, and its DevTools port from the
    file Chromium writes there."""

    def __init__(self, playwright: Playwright, setup: BrowserSetup):
        self.playwright, self.setup = playwright, setup
        self.browser: Browser | None = None
        self.processes: BrowserProcesses | None = None  # known once the browser tells its process id

    async def start(self) -> Launched:
        # Playwright's own bound comes first: it then kills what it started itself and removes its profile folder.
        self.browser = await self.playwright.chromium.launch(
            executable_path=self.setup.chromium,
            args=playwright_args(),
            ignore_default_args=PLAYWRIGHT_IGNORED_ARGS,
            headless=self.setup.headless,
            chromium_sandbox=sandboxed(),
            timeout=(self.setup.start_timeout_s - 1) * 1000,
        )
        folder = await _profile_folder(self.browser)
        self.processes = BrowserProcesses(folder)
        return Launched(self.browser, self.processes, await _devtools_url(folder))

    def running(self) -> bool:
        return self.browser is not None

    async def abandon(self) -> None:
        if self.browser is not None:  # else Playwright ended what its failed launch started
            await close_browser(self.browser, self.processes)


async def ask(opening: Awaitable[CDPSession], *methods: str) -> list[dict[str, Any]]:
    """Each CDP method's answer, in turn, on a session of its own, detached afterwards. The detach is bounded on its own
    (a failed one is of no consequence): once a caller's timeout has cut the calls short, nothing else would cut it short."""
    session = await opening
    try:
        return [await session.send(method) for method in methods]
    finally:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(session.detach(), CLOSE_TIMEOUT_S)


async def _profile_folder(browser: Browser) -> str:
    """The profile folder of a running browser: from its browser process's command line (its id asked over CDP)."""
    [info] = await ask(browser.new_browser_cdp_session(), "SystemInfo.getProcessInfo")
    processes = info["processInfo"]
    [pid] = [p["id"] for p in processes if p["type"] == "browser"]
    [folder] = [arg[len(PROFILE_FLAG) :] for arg in psutil.Process(pid).cmdline() if arg.startswith(PROFILE_FLAG)]
    return folder


async def _devtools_url(folder: str) -> str:
    """The browser's DevTools WebSocket: the port and path Chromium wrote to its profile folder once it listened (at
    once, as a rule: it is written before Playwright's launch returns, but is waited for as long as a start may take).
    The file is the port, a line's end, then the browser's path, whose fixed length (a UUID's) shows it was written
    whole. With the WebSocket's address itself, a browser-use session connects at once: given a port's HTTP address,
    each one first asks the port for it with an HTTP client of its own, made on the run's event loop."""
    path = os.path.join(folder, PORT_FILE)
    while True:
        with contextlib.suppress(OSError):
            with open(path, encoding="utf-8") as f:
                port, _, browser = f.read().partition("\n")
            if port.isdigit() and BROWSER_PATH.fullmatch(browser.strip()):
                return f"ws://127.0.0.1:{port}{browser.strip()}"
        await asyncio.sleep(0.02)


def _launch_said(text: str) -> str:
    """A failed Playwright launch's first line and what the browser or the spawn said (its stderr, its exit), without
    the command line it logs first."""
    lines = [line.strip().removeprefix("- ") for line in text.splitlines() if line.strip()]
    said = [line for line in lines[1:] if "[err]" in line or "did exit" in line or line.lower().startswith("spawn")]
    return error_line("; ".join([*lines[:1], *dict.fromkeys(said)][:4]))


def _start_failure(error: Exception, seconds: float, running: bool) -> str:
    if isinstance(error, TimeoutError) or "timeout" in type(error).__name__.lower():  # Playwright's TimeoutError too
        return f"no answer on its debugging port within {seconds:.0f} s"
    if not running:  # Playwright's launch failed, and says what it saw: the true cause
        return f"it exited before opening its debugging port: {_launch_said(str(error))}"
    return f"{type(error).__name__}: {error_line(error, 200)}"


async def close_browser(playwright_browser: Browser | None, processes: BrowserProcesses | None) -> list[int]:
    """End one browser in bounded time; returns the PIDs that would not die (normally none).

    Politely first, while the browser still answers, bounded; then every process is killed, whatever the polite step
    achieved. If this is cut short by a cancellation, the run's own sweep (see `browser_agents`) still kills them."""
    if processes is not None:  # None: not known yet (a Playwright launch whose browser never said which it was)
        processes.find()  # before the browser ends: its helpers are found through it
    if playwright_browser is not None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(playwright_browser.close(), CLOSE_TIMEOUT_S)
    return [] if processes is None else await processes.end()
