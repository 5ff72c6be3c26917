"""`preview-qa plan` and what `run --plan` and `demo --plan` share with it: drafts for the changed routes no test
covers, tried before shown, and where their YAML goes."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from preview_qa import app
from preview_qa.cli.options import (
    access_options,
    base_url_option,
    browser_path_option,
    command,
    headed_option,
    llm_options,
    manifest_argument,
    renamed_option,
    verbose_option,
)
from preview_qa.cli.values import (
    UsageError,
    browser_access,
    parse_previews,
    read_changed_files_to_plan,
    speed_config,
)
from preview_qa.config import DEFAULT_CACHE, RunConfig
from preview_qa.exits import PlanEnded
from preview_qa.manifest import loader
from preview_qa.results import PlanSummary


# `preview-qa plan` and `run --plan` (issue #39): drafts for the changed routes no test covers, tried before shown.
def plan_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """What `plan` drafts: routes by hand, drafts per route, where the YAML goes."""
    options = [
        click.option(
            "--route", "routes", multiple=True, metavar="PATH", help="Plan for this route too (repeatable), e.g. /settings."
        ),
        click.option(
            "--max", "most", type=click.IntRange(1, 10), default=3, show_default=True, help="Drafts per route, at most."
        ),
        click.option(
            "--write",
            type=click.Path(dir_okay=False, path_type=Path),
            help="Write the plan's YAML to FILE (never overwrites); else print it.",
        ),
    ]
    for option in reversed(options):
        f = option(f)
    return f


@command("plan")
@manifest_argument
@base_url_option("The preview to read the pages of and try the drafts on.")
@llm_options
@plan_options
@access_options
@click.option("--changed-files", metavar="FILE", help="The files the change touched, one path a line (- for stdin).")
@click.option("--changed-only", is_flag=True, help="In a GitHub Actions pull request run: the PR's changed files.")
@click.option(
    "--run-max-cost-usd",
    type=click.FloatRange(0, min_open=True),
    help="The most the whole plan may cost (drafting and trial runs), in USD.",
)
@renamed_option("--max-cost-usd", "--run-max-cost-usd", "the whole plan's budget")
@click.option("--price-per-mtok", metavar="IN,OUT", help="The model's price in USD per million input and output tokens.")
@click.option(
    "--cache",
    type=click.Path(file_okay=False, path_type=Path),
    default=DEFAULT_CACHE,
    show_default=True,
    help="The replay cache: a route a recorded run passed through is covered.",
)
@click.option(
    "--prove", is_flag=True, help="Prove each draft that passes its trial run (docs/proving.md): a vacuous one is dropped."
)
@headed_option
@browser_path_option
@verbose_option
def plan(
    manifest: Path,
    base_url: tuple[str, ...],
    routes: tuple[str, ...],
    most: int,
    write: Path | None,
    changed_files: str | None,
    changed_only: bool,
    run_max_cost_usd: float | None,
    price_per_mtok: str | None,
    cache: Path,
    prove: bool,
    headed: bool,
    browser_path: str | None,
    verbose: bool,
    extra_headers: tuple[str, ...],
    http_credentials: str | None,
    **llm: Any,
) -> PlanEnded:
    """Draft tests for the changed routes no test covers, from what each page shows; each is run once, and only the
    drafts that pass are proposed, as manifest YAML."""
    from preview_qa.planning.planner import Planner, PlanOptions

    refuse_existing(write)
    loaded = loader.load(manifest)
    changed = read_changed_files_to_plan(changed_files, changed_only)
    if changed is None and not routes:
        raise UsageError("give the changed files (--changed-files or --changed-only) or a --route to plan for.")
    speed = speed_config(cache, False, None, None, None, None, price_per_mtok, None)
    plain, app_urls = parse_previews(base_url, loaded.apps)
    config = RunConfig(
        manifest=manifest,
        base_url=plain,
        app_urls=app_urls,
        prove=prove,
        **browser_access(browser_path, headed, extra_headers, http_credentials),
        **llm,
        **speed,
    )
    options = PlanOptions(changed, list(routes), most, run_max_cost_usd)
    summary = app.plan_only(loaded, config, os.environ, Planner(loaded, config, options), verbose)
    tell_plan(summary, write)
    return PlanEnded(summary)


def tell_plan(
    summary: PlanSummary, write: Path | None, results: Path | None = None, drafting: bool = True, force: bool | None = None
) -> None:
    """The plan's routes and dropped drafts on stderr; its YAML into `write` (never over a file but with `force`, the
    command's --force), into the results folder's `results` file, else on stdout. `drafting` False (`run --impacted`
    without --plan): the routes only, with no word on drafts none were asked for."""
    for note in summary.notes:
        click.echo(f"plan: {note}", err=True)
    for route in summary.routes:
        click.echo(f"plan: {route.route}: {route.note or 'no test covers it'}", err=True)
    for name, why in summary.dropped.items():
        click.echo(f"plan: dropped {name!r}: {why}", err=True)
    if not drafting:
        return
    if summary.stopped is not None or not summary.yaml:
        click.echo(f"plan: {_what_happened(summary)}", err=True)
    elif results is not None:
        results.parent.mkdir(parents=True, exist_ok=True)
        results.write_text(summary.yaml, encoding="utf-8")
        click.echo(f"plan: the drafts that passed are in {results}", err=True)
    elif write is None:
        click.echo(summary.yaml, nl=False)
    else:
        refuse_existing(write, force)
        write.parent.mkdir(parents=True, exist_ok=True)
        with open(write, "w" if force else "x", encoding="utf-8") as f:  # "x": nor a file made meanwhile
            f.write(summary.yaml)
        click.echo(f"wrote {write}", err=True)


def _what_happened(summary: PlanSummary) -> str:
    """The plan's end in one line, when it proposes nothing: why, as it happened."""
    if summary.stopped is not None:
        return f"nothing could be planned: {summary.stopped}."
    if not summary.mapped:
        return "no changed file maps to a route; nothing to draft."
    if not summary.routes:
        return "every changed route has a test; nothing to draft."
    return f"none of the {summary.tried} draft(s) passed its trial run; nothing to propose."


def refuse_existing(write: Path | None, force: bool | None = None) -> None:
    """A --write FILE that exists is refused (exit 2), but with `force`; None: the command has no --force."""
    if write is not None and not force and write.exists():
        how = "plan --write never overwrites: give a new file" if force is None else "--force overwrites it"
        raise UsageError(f"{write} already exists; nothing was written ({how}).")
