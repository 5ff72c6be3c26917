"""The run's AgentFn: one pool of browsers and one Playwright driver for the whole run, each test in a fresh context;
when the run ends, no browser it started is left running. Nothing here imports browser-use: the test's session does
(agent/adapter/), the first time a test needs the agent."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import shutil
import tempfile
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING

from preview_qa.agent.browsers.launch import CLOSE_TIMEOUT_S, BrowserProcesses, BrowserSetup, StartedHere, start_gate
from preview_qa.agent.browsers.pool import BrowserPool
from preview_qa.agent.session import RunTools, run_agent
from preview_qa.agent.steps.stepped import SteppedSession
from preview_qa.agent.vision import VisionSwitch
from preview_qa.config import Vision
from preview_qa.engine.agent_port import AgentRequest
from preview_qa.lifecycle import children_temp_folder
from preview_qa.secrets.redact import Redactor
from preview_qa.verdict.agent_run import AgentRun

SHORT_TMP = 60  # a TMPDIR up to this long leaves room for Chromium's ".org.chromium.Chromium.XXXXXX/SingletonSocket"

if TYPE_CHECKING:
    from playwright.async_api import Playwright

    from preview_qa.agent.adapter.llm import MeteredChat


class _Driver:
    """One Playwright driver for the whole run, started by the first test that needs it: the run itself starts
    without awaiting anything, so a cancellation always finds the runner in charge of reporting it. Its temp folder
    is the run's `workroot` (or a short folder of the run's, under a deep TMPDIR): the profile folder Playwright makes
    for each browser it launches lies under it, so the run's sweep finds those browsers by their profile too."""

    def __init__(self, workroot: str) -> None:
        self.workroot = workroot
        self._lock = asyncio.Lock()
        self._playwright: Playwright | None = None

    async def get(self) -> Playwright:
        from playwright.async_api import async_playwright

        async with self._lock:
            if self._playwright is None:
                with children_temp_folder(self.workroot):
                    self._playwright = await async_playwright().start()
            return self._playwright

    async def stop(self) -> None:
        if self._playwright is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._playwright.stop(), CLOSE_TIMEOUT_S)


class RunAgents:
    """The run's AgentFn, and its pool: planning (issue #39) reads a route's page in a context of the same browsers."""

    def __init__(self, tools: RunTools) -> None:
        self.tools = tools
        self.pool = tools.pool

    async def __call__(self, request: AgentRequest) -> AgentRun:
        """One test: a task's session, or a test written as steps (agent/steps/), each step in turn."""
        if request.spec.steps is not None:
            return await SteppedSession(request, self.tools).run()
        return await run_agent(request, self.tools)


@contextlib.asynccontextmanager
async def browser_agents(
    browser: BrowserSetup, make_llm: Callable[[], MeteredChat], redactor: Redactor, vision: Vision = Vision.AUTO
) -> AsyncIterator[RunAgents]:
    """Each call runs one test in a fresh browser context of one of the run's browsers (at most `browser.browsers`,
    reused). When the run ends, however it ends, no browser it started is left running: every profile lies under one
    folder, and whatever runs with one is killed."""
    started_here = StartedHere()
    workroot = tempfile.mkdtemp(prefix="preview-qa-")
    # Chromium puts its singleton socket under its TMPDIR, and a socket path has at most 107 bytes: under a deep TMPDIR
    # (a CI's nested temp folders) every Playwright launch died at once ("Socket path too long"), so the driver's
    # temp folder is then a short one of its own, swept and removed like the run's.
    folders = [workroot] if len(workroot) <= SHORT_TMP else [workroot, tempfile.mkdtemp(prefix="pq-", dir="/tmp")]
    driver = _Driver(folders[-1])
    pool = BrowserPool(driver.get, browser, browser.browsers, start_gate())
    # What is loaded by now (Playwright, pydantic models) lives as long as the run; frozen, it is no longer scanned by
    # every full collection, such as the one browser-use makes after each agent (which freezes its own modules too).
    gc.freeze()

    try:
        yield RunAgents(RunTools(make_llm, browser, pool, workroot, redactor, VisionSwitch(vision)))
    finally:
        with contextlib.suppress(Exception):
            await asyncio.shield(pool.close())
        for folder in folders:
            BrowserProcesses(folder).kill()  # a test whose own teardown was cut short leaves nothing behind either
        started_here.kill()  # nor a browser that never showed its profile folder (a wrapper that drops the flags)
        await driver.stop()
        for folder in folders:
            shutil.rmtree(folder, ignore_errors=True)
