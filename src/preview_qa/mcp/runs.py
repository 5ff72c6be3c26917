"""run_tests and plan_tests: `preview-qa run` and `plan` as processes of their own, each writing under
.preview-qa/mcp-runs/<n>/ in the project folder, within the call's cost cap, with progress while they run."""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from preview_qa.config import RunConfig
from preview_qa.exits import Started, Told, told
from preview_qa.manifest import loader
from preview_qa.manifest.models import Manifest
from preview_qa.mcp.child import STDERR, Ended, command, run_child
from preview_qa.mcp.folder import ToolRefused
from preview_qa.mcp.models import Plan, PlanTestsArgs, RunSummary, RunTestsArgs
from preview_qa.mcp.results_file import ResultsFile
from preview_qa.mcp.settings import Progress, Settings
from preview_qa.reporters.output.files import RESULTS
from preview_qa.selection.select import select

HEARTBEAT_S = 10.0  # a progress notification at least this often, so that a client sees the call is alive
PLAN_FILE = "plan.yml"
CHANGED_FILES = "changed-files.txt"
PLAN_NOTE = "plan: "


async def run_tests(settings: Settings, args: RunTestsArgs, progress: Progress) -> RunSummary:
    """The tests `run` would run with these filters, and the compact summary of their results."""
    manifest, loaded = _manifest(settings, args.manifest)
    chosen = select(
        loaded,
        RunConfig(manifest=manifest, base_url=args.base_url, app_urls=loaded.apps, only=args.names or [], tags=args.tags or []),
    )
    total = len(chosen.tests)
    if chosen.spending:  # a run of exact steps calls no LLM: its cap holds whatever the model's price
        settings.refuse_unpriced()
    run = settings.folder.new_run()
    argv = command(
        "run",
        settings.folder.shown(manifest),
        *["--base-url", args.base_url, "--out", settings.folder.shown(run), "--no-comment", *settings.llm_flags()],
        *_cost_flags(settings, loaded),
        *[f for name in args.names or [] for f in ("--only", name)],
        *[f for tag in args.tags or [] for f in ("--tag", tag)],
        *(["--prove"] if args.prove else []),
    )
    ticker = _RunTicker(run / RESULTS, total, progress)
    ended = await run_child(argv, settings.folder.root, settings.child_env(), run, ticker.tick)
    if told("run", ended.code) is not Told.RESULTS or not (run / RESULTS).is_file():
        raise _refused("run", ended, settings.folder.shown(run))
    await progress(total, total, f"{total} of {total} tests done")
    return ResultsFile(settings.folder, run / RESULTS).summary()


async def plan_tests(settings: Settings, args: PlanTestsArgs, progress: Progress) -> Plan:
    """`preview-qa plan` for the changed files or routes: the drafts that passed their trial, as YAML."""
    if not args.changed_files and not args.routes:
        raise ToolRefused("plan_tests needs changed_files (the files the change touched) or routes (e.g. /settings).")
    manifest, _ = _manifest(settings, args.manifest)
    changed = [settings.folder.shown(settings.folder.inside(f, "changed file")) for f in args.changed_files or []]
    settings.refuse_unpriced()
    run = settings.folder.new_run()
    flags = ["--base-url", args.base_url, "--write", settings.folder.shown(run / PLAN_FILE), *settings.llm_flags()]
    if changed:
        (run / CHANGED_FILES).write_text("".join(f"{path}\n" for path in changed), encoding="utf-8")
        flags += ["--changed-files", settings.folder.shown(run / CHANGED_FILES)]
    flags += [f for route in args.routes or [] for f in ("--route", route)]
    started = time.monotonic()

    async def tick() -> None:
        await progress(time.monotonic() - started, None, f"planning: {time.monotonic() - started:.0f} s")

    argv = command("plan", settings.folder.shown(manifest), *flags, "--run-max-cost-usd", f"{settings.run_max_cost_usd:g}")
    ended = await run_child(argv, settings.folder.root, settings.child_env(), run, _every(HEARTBEAT_S, tick))
    if told("plan", ended.code) is Told.STOPPED and ended.last_line:  # the preview or the LLM did not answer
        raise ToolRefused(ended.last_line)
    if told("plan", ended.code) is not Told.RESULTS:
        raise _refused("plan", ended, settings.folder.shown(run))
    plan = run / PLAN_FILE
    notes = [
        line.removeprefix(PLAN_NOTE)
        for line in (run / STDERR).read_text(encoding="utf-8").splitlines()
        if line.startswith(PLAN_NOTE)
    ]
    text = plan.read_text(encoding="utf-8") if plan.is_file() else ""
    return Plan(plan=settings.folder.shown(plan) if text else None, yaml=text, notes=notes)


def _manifest(settings: Settings, given: str) -> tuple[Path, Manifest]:
    path = settings.folder.existing_file(given, "manifest")
    return path, loader.load(path)


def _cost_flags(settings: Settings, manifest: Manifest) -> list[str]:
    """The call's cap as `run`'s budgets: the run starts no test once its tests have spent it, and each test stops
    past it too, unless a test's own max_cost_usd is lower (the flag would override it: the manifest's then hold)."""
    cap = f"{settings.run_max_cost_usd:g}"
    lower = any(t.max_cost_usd is not None and t.max_cost_usd < settings.run_max_cost_usd for t in manifest.tests)
    return ["--run-max-cost-usd", cap, *([] if lower else ["--max-cost-usd", cap])]


def _refused(what: Started, ended: Ended, logs: str) -> ToolRefused:
    """How a child that did not finish its job ended, in one sentence: its own (it refused, or crashed), or its code."""
    said = told(what, ended.code)
    if said in (Told.REFUSED, Told.CRASHED) and ended.last_line:
        return ToolRefused(f"{what} refused: {ended.last_line}" if said is Told.REFUSED else ended.last_line)
    return ToolRefused(f"{what} ended with exit code {ended.code} and no results; its output is in {logs}/.")


class _RunTicker:
    """Progress from the run's results.json, which it rewrites as each test finishes: a notification when a test
    finished, and a heartbeat between."""

    def __init__(self, results: Path, total: int, progress: Progress):
        self.results, self.total, self.progress = results, total, progress
        self.done, self.told_at = -1, 0.0

    async def tick(self) -> None:
        tests = _finished(self.results)
        if len(tests) != self.done or time.monotonic() - self.told_at >= HEARTBEAT_S:
            self.done, self.told_at = len(tests), time.monotonic()
            last = f": {tests[-1].get('name')!r} {tests[-1].get('status')}" if tests else ""
            await self.progress(len(tests), self.total, f"{len(tests)} of {self.total} tests done{last}")


def _finished(results: Path) -> list[dict[str, object]]:
    try:
        tests = json.loads(results.read_text(encoding="utf-8")).get("tests")
    except (OSError, ValueError, AttributeError):
        return []
    return [t for t in tests if isinstance(t, dict)] if isinstance(tests, list) else []


def _every(seconds: float, tick: Callable[[], Awaitable[None]]) -> Callable[[], Awaitable[None]]:
    """`tick`, called at most once every `seconds`."""
    last = [-seconds]

    async def maybe() -> None:
        if time.monotonic() - last[0] >= seconds:
            last[0] = time.monotonic()
            await tick()

    return maybe
