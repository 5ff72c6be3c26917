"""`preview-qa demo`: the bundled demo, a demo shop and a scripted agent, no API key needed."""

from __future__ import annotations

import os
from pathlib import Path

import click

from preview_qa.cli.options import RunFlags, command, out_option, run_options
from preview_qa.cli.plan import tell_plan
from preview_qa.cli.values import UsageError
from preview_qa.exits import ExploreEnded, RunEnded

DEMO_OUT = "demo-results"


@command()
@out_option(DEMO_OUT)
@run_options
@click.option("--plan", is_flag=True, help="Then draft tests for the demo's changed routes, try them, write plan.yml.")
@click.option(
    "--explore", is_flag=True, help="Instead of the tests: explore a copy of the shop that breaks two things, into explore/."
)
def demo(out: Path, flags: RunFlags, plan: bool, explore: bool) -> RunEnded | ExploreEnded:
    """Run the bundled demo: a demo site and a scripted agent, no API key needed."""
    from preview_qa.demo.runner import off_script, run_demo

    if explore:
        return _explore(out / "explore", flags, plan)
    browser = (flags.chromium, flags.cdp_url)
    result = run_demo(
        out, flags.concurrency, flags.only, flags.headless, flags.verbose, os.environ, plan, flags.keywords, *browser
    )
    if result.plan is not None:
        tell_plan(result.plan, None, out / "plan.yml")
    return RunEnded(result, off_script)


def _explore(out: Path, flags: RunFlags, plan: bool) -> ExploreEnded:
    """`demo --explore`: what explore finds on the demo's PR, with the demo's own rule for its exit code (0 when it
    finds exactly what the PR breaks; docs/explore.md)."""
    from preview_qa.demo import exploring
    from preview_qa.reporters import explore as outputs

    if plan:
        raise UsageError("--explore runs no tests and drafts none: give --plan or --explore, not both.")
    if flags.cdp_url:
        raise UsageError("demo --explore launches its own browsers: --cdp-url is for the demo's tests (demo without --explore).")
    result = exploring.explore_demo(out, flags.headless, flags.chromium, os.environ)
    outputs.write(result, out, os.environ)
    for line in [*outputs.told(result, out / "findings.md"), *exploring.told(result, out)]:
        click.echo(line)
    return ExploreEnded(result, fails=exploring.off_script)
