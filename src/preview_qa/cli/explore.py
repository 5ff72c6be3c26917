"""`preview-qa explore`: what this PR broke, found on pages no test covers, each finding confirmed by a repro that
fails on the preview and passes on the baseline."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click

from preview_qa.cli.options import (
    access_options,
    browser_path_option,
    command,
    env,
    headed_option,
    llm_options,
    out_option,
    trace_option,
)
from preview_qa.cli.plan import refuse_existing, tell_plan
from preview_qa.cli.values import UsageError, browser_access, price_given, read_changed_files_to_plan
from preview_qa.config import RunConfig, TraceMode
from preview_qa.exits import ExploreEnded
from preview_qa.manifest import loader

DEFAULT_EXPLORE_OUT = "preview-qa-explore"


@command()
@click.option("--base-url", required=True, envvar=env("INPUT_BASE-URL", "PREVIEW_QA_BASE_URL"), help="The PR's preview.")
@click.option(
    "--baseline-url", required=True, envvar=env("INPUT_BASELINE-URL"), help="The default branch's deployment, to compare with."
)
@click.option(
    "--page", "pages", multiple=True, metavar="PATH", help="Explore from this page (repeatable); else the sitemap, else /."
)
@click.option(
    "--changed-files", metavar="FILE", help="The files the change touched, one path a line (- for stdin): their routes first."
)
@click.option("--changed-only", is_flag=True, help="In a GitHub Actions pull request run: the PR's changed files.")
@click.option("--max-pages", type=click.IntRange(1, 500), default=30, show_default=True, help="Pages swept, at most.")
@click.option(
    "--max-charters",
    type=click.IntRange(0, 50),
    default=5,
    show_default=True,
    help="Changed pages an agent uses as a user would, reporting what is broken; 0: sweeps alone, no LLM.",
)
@click.option(
    "--max-cost-usd",
    type=click.FloatRange(0, min_open=True),
    help="The most the charters, their repros and --write's drafts may cost, in USD.",
)
@click.option("--price-per-mtok", metavar="IN,OUT", help="The model's price in USD per million input and output tokens.")
@llm_options
@click.option(
    "--manifest",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help="A manifest whose defaults say how to reach and read the app (allowed_domains, secrets, device).",
)
@click.option(
    "--use-state",
    metavar="NAME",
    help="Explore signed in: every page starts from the login the --manifest's test with save_state NAME makes.",
)
@out_option(DEFAULT_EXPLORE_OUT, "the findings (results.json, findings.md) and each run's results")
@click.option(
    "--write",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Then write a starter suite to FILE: each page's drafts that pass and are not vacuous (LLM).",
)
@click.option("--force", is_flag=True, help="With --write: overwrite FILE.")
@access_options
@trace_option
@headed_option
@browser_path_option
def explore(
    base_url: str,
    baseline_url: str,
    pages: tuple[str, ...],
    changed_files: str | None,
    changed_only: bool,
    max_pages: int,
    max_charters: int,
    max_cost_usd: float | None,
    price_per_mtok: str | None,
    manifest: Path | None,
    use_state: str | None,
    out: Path,
    write: Path | None,
    force: bool,
    extra_headers: tuple[str, ...],
    http_credentials: str | None,
    trace: str,
    headed: bool,
    browser_path: str | None,
    **llm: Any,
) -> ExploreEnded:
    """Sweep the preview's pages and the baseline's (errors, failed requests, broken links and images, axe-core, a
    screenshot), and report what the preview breaks that the baseline does not, each with a repro test."""
    from preview_qa.explore import starter
    from preview_qa.explore.explorer import Exploration
    from preview_qa.explore.explorer import explore as run_exploration
    from preview_qa.reporters import explore as outputs
    from preview_qa.reporters.github.reporter import commands_stopped

    if base_url.rstrip("/") == baseline_url.rstrip("/"):
        raise UsageError("--base-url and --baseline-url are the same deployment: nothing to compare.")
    refuse_existing(write, force)
    config = RunConfig(
        manifest=manifest or Path("explore.yml"),
        base_url=base_url,
        out=out,
        price_per_mtok=price_given(price_per_mtok),
        trace=TraceMode(trace),
        **browser_access(browser_path, headed, extra_headers, http_credentials),
        **llm,
    )
    changed = read_changed_files_to_plan(changed_files, changed_only, "explore", ": the site is explored from its sitemap or /")
    loaded = loader.load(manifest) if manifest else None
    if use_state and loaded is None:
        raise UsageError(f"--use-state {use_state} needs the --manifest whose test saves that login (save_state).")
    job = Exploration(config, baseline_url, max_pages, pages, loaded, changed, max_charters, max_cost_usd, use_state)
    if write is not None:
        starter.check(job, os.environ)
    with commands_stopped(os.environ):  # in Actions: what its own runs print (page text) issues no workflow command
        result = run_exploration(job, os.environ)
    outputs.write(result, out, os.environ)
    for line in outputs.told(result, out / "findings.md"):  # one line each, inert: no page text issues a command
        click.echo(line)
    with commands_stopped(os.environ):
        suite = starter.draft(job, result.pages, os.environ, result.usage.cost_usd) if write is not None else None
    if suite is not None:
        tell_plan(suite, write, force=force)
    return ExploreEnded(result, suite)
