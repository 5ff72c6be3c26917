"""`preview-qa schema`: the manifest's JSON Schema on stdout."""

from __future__ import annotations

import click

from preview_qa.cli.options import command


@command()
def schema() -> None:
    """Print the manifest's JSON Schema (for editors: completion, hover help, checks as you type)."""
    from preview_qa.manifest.schema import render

    click.echo(render(), nl=False)
