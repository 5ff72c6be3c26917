"""Prints where one test's wall and CPU time go, for an agent run and for the replay of its recording (issue 11).

    python bench/breakdown.py                  # a 3-step login test, 1 s scripted LLM latency
    python bench/breakdown.py --latency 0
    python bench/breakdown.py --parts          # and the agent run's steps cut into their parts (issue 28 item 3)

One test at a time, in this process, through the agent layer the runner uses (`browser_agents`), against the fixture
shop and the scripted LLM. CPU is that of this process and every process it started (Chromium, the Playwright driver),
read at each phase's start and end; the screenshot and GIF work that the artifacts reporter does on its own thread is
timed here on the screenshots the run produced. The test types its password as a secret, so every screenshot is
masked first, as in a user's login test.

--parts times each part of the agent's steps, summed over them: browser-use's capture of the page before a step (its
DOM and its screenshot, taken side by side, so their CPU overlaps), our screenshot after a step, the masking before
every screenshot, and the step watcher's work. Each part's CPU is the whole process tree's over the part's wall time,
so it also holds whatever else ran meanwhile (one test runs at a time here: little).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import importlib
import os
import time
from collections.abc import Iterator
from typing import Any

from fixture_site import DemoSite

from preview_qa.agent.adapter.llm import make_llm
from preview_qa.agent.browser_agents import browser_agents
from preview_qa.agent.browsers.chromium import find_chromium
from preview_qa.agent.browsers.launch import BrowserSetup
from preview_qa.agent.evidence.timing import Phases
from preview_qa.demo.scripted_llm import ScriptedLLM
from preview_qa.engine.agent_port import AgentFn, AgentRequest, Recording
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
    {"actions": [{"input": {"element": "Password", "text": "<secret>pw</secret>"}}]},
    {"actions": [{"click": {"element": "Log in"}}]},
    {"done": {"status": "pass", "reason": "The dashboard says Signed in as demo@acme.test."}},
]
MANIFEST = f"""
version: 1
tests:
  - name: login
    start: /login
    task: "{TASK} The password is <secret>pw</secret>."
    secrets: {{pw: BENCH_PASSWORD}}
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
    agent: AgentFn, spec: TestSpec, site: DemoSite, secrets: dict[str, str], recording: Recording | None
) -> tuple[AgentRun, Collected, float]:
    events = Collected()
    clock = time.monotonic()
    request = AgentRequest(spec, site.url + spec.start, site.url, ["127.0.0.1"], secrets, events, recording=recording)
    trace = await agent(request)
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


DOM_WATCHDOG = "browser_use.browser.watchdogs.dom_watchdog"
# part -> (module, attribute): each an async function or method of browser-use's or ours that a step runs
PARTS = {
    "browser-use: the page's state before a step (waits, DOM, screenshot)": (
        DOM_WATCHDOG,
        "DOMWatchdog.on_BrowserStateRequestEvent",
    ),
    "  of which its DOM capture": (DOM_WATCHDOG, "DOMWatchdog._build_dom_tree_without_highlights"),
    "  of which its screenshot (masked)": (DOM_WATCHDOG, "DOMWatchdog._capture_clean_screenshot"),
    "browser-use: its context for the model (the page's state above, messages)": (
        "browser_use.agent.service",
        "Agent._prepare_context",
    ),
    "browser-use: the model's answer (the LLM's wait, its client)": ("browser_use.agent.service", "Agent._get_next_action"),
    "browser-use: running the step's actions": ("browser_use.agent.service", "Agent.multi_act"),
    "browser-use: after the actions (its own bookkeeping)": ("browser_use.agent.service", "Agent._post_process"),
    "ours: the page settling before the first step and after each step": (
        "preview_qa.agent.adapter.step_watcher",
        "StepWatcher.settle",
    ),
    "ours: a step's own screenshot (masked; only when the next step's capture has none)": (
        "preview_qa.agent.adapter.history",
        "session_screenshot",
    ),
    "ours: the filled-in form's screenshot before a submit (masked)": ("preview_qa.agent.session", "session_screenshot"),
    "ours: masking, in every screenshot above (two passes each)": ("preview_qa.agent.guards.masking", "Mask._apply"),
    "ours: the step watcher's plan of a step": ("preview_qa.agent.adapter.step_watcher", "StepWatcher.on_new_step"),
    "ours: the step watcher before each action": ("preview_qa.agent.adapter.step_watcher", "StepWatcher.before_action"),
}


@contextlib.contextmanager
def timed_parts() -> Iterator[dict[str, list[float]]]:
    """While open, each of PARTS is timed: {part: [calls, wall s, CPU s of the process tree]}."""
    cpu = Phases(measure_cpu=True).cpu
    totals = {part: [0.0, 0.0, 0.0] for part in PARTS}
    patched = []
    for part, (module, path) in PARTS.items():
        *owner_path, name = path.split(".")
        owner = functools.reduce(getattr, owner_path, importlib.import_module(module))
        original = getattr(owner, name)

        @functools.wraps(original)
        async def timed(*args: Any, _original: Any = original, _total: list[float] = totals[part], **kwargs: Any) -> Any:
            wall, cpu_start = time.monotonic(), cpu()
            try:
                return await _original(*args, **kwargs)
            finally:
                _total[0] += 1
                _total[1] += time.monotonic() - wall
                _total[2] += (cpu() or 0.0) - (cpu_start or 0.0)

        setattr(owner, name, timed)
        patched.append((owner, name, original))
    try:
        yield totals
    finally:
        for owner, name, original in patched:
            setattr(owner, name, original)


def parts_table(totals: dict[str, list[float]], trace: AgentRun, detail: dict[str, Any]) -> None:
    steps = [row for row in detail["phases"] if row["phase"].endswith("(agent)")]
    print(
        f"\nthe agent's {len(steps)} steps: {sum(r['wall_s'] for r in steps):.3f} s wall, "
        f"{sum(r['cpu_s'] or 0 for r in steps):.3f} CPU-s, {trace.usage.llm_calls} LLM call(s); their parts, summed:"
    )
    print(f"  {'part':<78} {'calls':>5} {'wall s':>7} {'CPU s':>7}")
    for part, (calls, wall, cpu) in totals.items():
        print(f"  {part:<78} {int(calls):5d} {wall:7.3f} {cpu:7.3f}")


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


async def main(latency: float, parts: bool) -> None:
    chromium = find_chromium(None, os.environ)
    if chromium is None:
        raise SystemExit("bench: no Chromium found")
    spec = loads(MANIFEST).tests[0]
    os.environ["BENCH_PASSWORD"] = PASSWORD
    secrets = {"pw": PASSWORD}
    with DemoSite(password=PASSWORD) as site, ScriptedLLM([{"match": "[breakdown]", "turns": STEPS}], latency=latency) as llm:

        def llm_factory() -> Any:
            return make_llm(LLMSettings(provider="openai", model="scripted", api_key="bench", base_url=llm.url))

        setup = BrowserSetup(chromium=chromium, measure_cpu=True)
        async with browser_agents(setup, llm_factory, Redactor(secrets)) as agent:
            await one_test(agent, spec, site, secrets, None)  # warm-up: imports, the Playwright driver, the OS cache
            with timed_parts() if parts else contextlib.nullcontext({}) as totals:
                trace, events, wall = await one_test(agent, spec, site, secrets, None)
            table("agent run", wall, trace, events.timings(), artifacts_work(events))
            if parts:
                parts_table(totals, trace, events.timings())
            history = events.of(AgentHistory)[-1].history
            seen = {e.number: e.before_png for e in events.of(StepRecorded) if e.before_png}
            recording = Recording(origin=site.url, history=history, screenshots=seen)
            await one_test(agent, spec, site, secrets, recording)  # in a run of replays, the test before was one too
            trace, events, wall = await one_test(agent, spec, site, secrets, recording)
            table("replay", wall, trace, events.timings(), artifacts_work(events))
    print(f"\n{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}, scripted LLM latency {latency:g} s")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--latency", type=float, default=1.0, help="seconds the scripted LLM waits before each answer")
    parser.add_argument("--parts", action="store_true", help="also time the parts of the agent's steps")
    arguments = parser.parse_args()
    asyncio.run(main(arguments.latency, arguments.parts))
