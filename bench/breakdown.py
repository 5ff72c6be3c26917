"""Prints where one test's wall and CPU time go, for an agent run and for the replay of its recording (issue 11).

    python bench/breakdown.py                  # a 3-step login test, 1 s scripted LLM latency
    python bench/breakdown.py --latency 0

One test at a time, in this process, through the agent layer the runner uses (`browser_agents`), against the fixture
shop and the scripted LLM. CPU is that of this process and every process it started (Chromium, the Playwright driver),
read at each phase's start and end; the screenshot and GIF work that the artifacts reporter does on its own thread is
timed here on the screenshots the run produced.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time
from collections.abc import Callable
from typing import Any

from preview_qa.agent.browser import BrowserSetup
from preview_qa.agent.browser_agents import browser_agents
from preview_qa.agent.llm import make_llm
from preview_qa.config import find_chromium
from preview_qa.demo.scripted_llm import ScriptedLLM
from preview_qa.demo.site import DemoSite
from preview_qa.engine.agent_port import Recording
from preview_qa.events import AgentHistory, Event, FinalScreenshot, Observed, StepRecorded
from preview_qa.manifest.loader import loads
from preview_qa.manifest.models import TestSpec
from preview_qa.providers import LLMSettings
from preview_qa.reporters.output.images import animation, shrink_screenshot
from preview_qa.secrets.redact import Redactor
from preview_qa.verdict.agent_run import AgentRun

PASSWORD = "bench-password"
TASK = "[breakdown] Log in as demo@acme.test and check that the dashboard greets them."
STEPS = [
    {"actions": [{"input": {"element": "Email", "text": "demo@acme.test"}}]},
    {"actions": [{"input": {"element": "Password", "text": PASSWORD}}]},
    {"actions": [{"click": {"element": "Log in"}}]},
    {"done": {"status": "pass", "reason": "The dashboard says Signed in as demo@acme.test."}},
]
MANIFEST = f"""
version: 1
tests:
  - name: login
    start: /login
    task: "{TASK}"
    expect: {{url: /dashboard, text: [Signed in as demo@acme.test]}}
"""


class Collected:
    """The events of one test, as the runner would pass them to the reporters."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def __call__(self, event: Event) -> None:
        self.events.append(event)

    def of(self, kind: type[Any]) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind)]

    def timings(self) -> dict[str, Any]:
        return next(e.detail for e in self.of(Observed) if e.kind == "timings")


async def one_test(
    agent: Callable[..., Any], spec: TestSpec, site: DemoSite, recording: Recording | None
) -> tuple[AgentRun, Collected, float]:
    events = Collected()
    clock = time.monotonic()
    trace = await agent(spec, site.url + spec.start, ["127.0.0.1"], {}, events, recording=recording)
    return trace, events, time.monotonic() - clock


def artifacts_work(events: Collected) -> dict[str, Any]:
    """What the artifacts reporter's thread does for the test: shrink each screenshot, then make the GIF."""
    shots = [e.screenshot_png for e in events.of(StepRecorded) if e.screenshot_png]
    shots += [e.png for e in events.of(FinalScreenshot)]
    wall, cpu = time.monotonic(), time.process_time()
    small = [shrink_screenshot(png) for png in shots]
    shrunk = (time.monotonic() - wall, time.process_time() - cpu)
    wall, cpu = time.monotonic(), time.process_time()
    animation(small)
    gif = (time.monotonic() - wall, time.process_time() - cpu)
    return {
        "phases": [
            {"phase": f"shrink {len(shots)} screenshot(s) (artifacts thread)", "wall_s": shrunk[0], "cpu_s": shrunk[1]},
            {"phase": "run.gif (artifacts thread)", "wall_s": gif[0], "cpu_s": gif[1]},
        ]
    }


def table(title: str, wall: float, trace: AgentRun, detail: dict[str, Any], extra: dict[str, Any]) -> None:
    drift = f" ({trace.replay_error})" if trace.replay_error else ""
    print(
        f"\n{title}: {wall:.2f} s test wall time, {trace.execution.value}{drift}, {trace.steps} step(s), "
        f"{trace.usage.llm_calls} LLM call(s){', ' + trace.infrastructure_error if trace.infrastructure_error else ''}"
    )
    print(f"  {'phase':<78} {'wall s':>7} {'CPU s':>7}")
    for row in [*detail["phases"], *extra["phases"]]:
        cpu = "" if row["cpu_s"] is None else f"{row['cpu_s']:7.3f}"
        print(f"  {row['phase']:<78} {row['wall_s']:7.3f} {cpu:>7}")


async def main(latency: float) -> None:
    chromium = find_chromium()
    if chromium is None:
        raise SystemExit("bench: no Chromium found")
    spec = loads(MANIFEST).tests[0]
    with DemoSite(password=PASSWORD) as site, ScriptedLLM([{"match": "[breakdown]", "turns": STEPS}], latency=latency) as llm:

        def llm_factory() -> Any:
            return make_llm(LLMSettings(provider="openai", model="scripted", api_key="bench", base_url=llm.url))

        setup = BrowserSetup(chromium=chromium, measure_cpu=True)
        async with browser_agents(setup, llm_factory, site.url, Redactor({})) as agent:
            await one_test(agent, spec, site, None)  # warm-up: imports, the Playwright driver, the OS file cache
            trace, events, wall = await one_test(agent, spec, site, None)
            table("agent run", wall, trace, events.timings(), artifacts_work(events))
            history = events.of(AgentHistory)[-1].history
            seen = {e.number: e.before_png for e in events.of(StepRecorded) if e.before_png}
            recording = Recording(origin=site.url, history=history, screenshots=seen)
            await one_test(agent, spec, site, recording)  # as in a run of replays: the test before was a replay too
            trace, events, wall = await one_test(agent, spec, site, recording)
            table("replay", wall, trace, events.timings(), artifacts_work(events))
    print(f"\n{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}, scripted LLM latency {latency:g} s")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--latency", type=float, default=1.0, help="seconds the scripted LLM waits before each answer")
    asyncio.run(main(parser.parse_args().latency))
