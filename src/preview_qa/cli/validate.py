"""`preview-qa validate`: a manifest checked, and what `run` needs from this environment."""

from __future__ import annotations

import os
from pathlib import Path

import click

from preview_qa import app
from preview_qa.cli.options import command, llm_options, manifest_argument
from preview_qa.config import find_chromium
from preview_qa.manifest import loader
from preview_qa.providers import Provider


@command()
@manifest_argument
@click.option(
    "--secret-env", is_flag=True, help="Print only the environment variables the tests' secrets are read from, one per line."
)
@click.option(
    "--offline",
    is_flag=True,
    help="Check the manifest only, not what `run` needs from the environment (secrets, API key, Chromium).",
)
@llm_options
def validate(
    manifest: Path,
    secret_env: bool,
    offline: bool,
    provider: Provider,
    model: str | None,
    api_key: str | None,
    llm_base_url: str | None,
) -> None:
    """Check a manifest, and that `run` would find what it needs in this environment (exit 2 if not)."""
    loaded = loader.load(manifest)
    if secret_env:  # the action forwards exactly these variables into its container
        click.echo("\n".join(dict.fromkeys(test.secret_env(name) for test in loaded.tests for name in test.secrets)))
        return
    if not offline:
        app.preflight(loaded, os.environ, provider, model, api_key, llm_base_url, find_chromium())
    checked = "valid" if offline else "valid, and its secrets, API key and Chromium are there"
    click.echo(f"{manifest}: {len(loaded.tests)} test(s), {checked}.")
