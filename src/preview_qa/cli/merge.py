"""`preview-qa merge`: the results folders of several shards, merged into one."""

from __future__ import annotations

import os
from pathlib import Path

import click

from preview_qa import app
from preview_qa.cli.options import command, env, fail_on_option, out_option
from preview_qa.config import DEFAULT_OUT, FailRules
from preview_qa.exits import RunEnded


@command()
@click.argument("folders", nargs=-1, required=True, type=click.Path(file_okay=False, exists=True, path_type=Path))
@out_option(DEFAULT_OUT, "the merged results, reports and artifacts")
@fail_on_option
@click.option(
    "--comment/--no-comment",
    default=True,
    envvar=env("INPUT_COMMENT"),
    show_default=True,
    help="In a GitHub Actions pull request run: post or update one PR comment with the merged results.",
)
def merge(folders: tuple[Path, ...], out: Path, fail_on: FailRules, comment: bool) -> RunEnded:
    """Merge the results folders of several shards (`run --shard I/N`) into one, with one report and exit code."""
    return RunEnded(app.merge(list(folders), out, comment, os.environ), fail_on.fails)
