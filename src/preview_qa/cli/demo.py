"""`preview-qa demo`: the bundled demo, a demo shop and a scripted agent, no API key needed."""

from __future__ import annotations

import os
from pathlib import Path

import click

from preview_qa.cli.options import command, run_options
from preview_qa.cli.plan import tell_plan
from preview_qa.config import DEFAULT_OUT
from preview_qa.exits import RunEnded


@command()
@run_options
@click.option("--plan", is_flag=True, help="Then draft tests for the demo's changed routes, try them, write plan.yml.")
def demo(out: Path, concurrency: int, only: tuple[str, ...], headful: bool, verbose: bool, plan: bool) -> RunEnded:
    """Run the bundled demo: a demo site and a scripted agent, no API key needed."""
    from preview_qa.demo.runner import off_script, run_demo

    out = Path("demo-results") if out == Path(DEFAULT_OUT) else out
    result = run_demo(out, concurrency, list(only), not headful, verbose, os.environ, plan)
    if result.plan is not None:
        tell_plan(result.plan, None, out / "plan.yml")
    return RunEnded(result, off_script)
