"""`preview-qa demo`: the bundled demo, a demo shop and a scripted agent, no API key needed."""

from __future__ import annotations

import os
from pathlib import Path

import click

from preview_qa.cli.options import RunFlags, command, out_option, run_options
from preview_qa.cli.plan import tell_plan
from preview_qa.exits import RunEnded

DEMO_OUT = "demo-results"


@command()
@out_option(DEMO_OUT)
@run_options
@click.option("--plan", is_flag=True, help="Then draft tests for the demo's changed routes, try them, write plan.yml.")
def demo(out: Path, flags: RunFlags, plan: bool) -> RunEnded:
    """Run the bundled demo: a demo site and a scripted agent, no API key needed."""
    from preview_qa.demo.runner import off_script, run_demo

    result = run_demo(
        out, flags.concurrency, flags.only, flags.headless, flags.verbose, os.environ, plan, flags.keywords, flags.chromium
    )
    if result.plan is not None:
        tell_plan(result.plan, None, out / "plan.yml")
    return RunEnded(result, off_script)
