"""`preview-qa validate`: a manifest checked, and what `run` needs from this environment; `preview-qa schema`: the JSON
Schema it is checked against, on stdout (the manifest's two commands, side by side)."""

from __future__ import annotations

import os
from pathlib import Path

import click

from preview_qa import app
from preview_qa.cli.options import WORDS, browser_path_option, command, llm_options, manifest_argument, words
from preview_qa.config import RunConfig
from preview_qa.errors import LLMConfigError
from preview_qa.manifest import loader
from preview_qa.providers import LLMSettings, Provider
from preview_qa.selection.select import chosen


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
@click.option("--only", multiple=True, help="Check the secrets of this test only, as `run --only` runs it (repeatable).")
@click.option("--tag", "tags", multiple=True, type=WORDS, metavar="TAG", help="Check only the secrets of tests with this tag.")
@click.option("--skip-tag", "skip_tags", multiple=True, type=WORDS, metavar="TAG", help="Leave these tests' secrets out.")
@llm_options
@browser_path_option
def validate(
    manifest: Path,
    secret_env: bool,
    offline: bool,
    only: tuple[str, ...],
    tags: tuple[str, ...],
    skip_tags: tuple[str, ...],
    provider: Provider,
    model: str | None,
    api_key: str | None,
    llm_base_url: str | None,
    browser_path: str | None,
) -> None:
    """Check a manifest, and that `run` would find what it needs in this environment (exit 2 if not): every test's
    secrets, or with --only, --tag or --skip-tag those of the tests `run` would run with the same flags (and of the
    setup tests they start from)."""
    loaded = loader.load(manifest)
    if secret_env:  # the action forwards exactly these variables into its container
        click.echo("\n".join(dict.fromkeys(test.secret_env(name) for test in loaded.tests for name in test.secrets)))
        return
    if not offline:
        selected = RunConfig(manifest=manifest, base_url="", only=list(only), tags=words(tags), skip_tags=words(skip_tags))
        running = {spec.name for spec in chosen(loaded, selected)} if only or tags or skip_tags else None
        _, llm, _ = app.preflight(loaded, os.environ, provider, model, api_key, llm_base_url, browser_path, running)
        if app.calls_llm(loaded, running):
            _endpoint(llm)
    checked = "valid" if offline else "valid, and its secrets, API key and Chromium are there"
    click.echo(f"{manifest}: {len(loaded.tests)} test(s), {checked}.")


def _endpoint(llm: LLMSettings) -> None:
    """An LLM endpoint given that gives no HTTP answer is refused, naming its URL; one that does not list the model is
    said (hosted providers' own endpoints are not asked: validate runs where their key may not be)."""
    import asyncio

    from preview_qa.engine.preview import llm_endpoint

    down, note = asyncio.run(llm_endpoint(llm.provider, llm.model, llm.api_key, llm.base_url))
    if down is not None:
        raise LLMConfigError(f"the LLM endpoint did not answer: {down}; check --llm-base-url (or the provider's variable).")
    if note is not None:
        click.echo(f"preview-qa: warning: {note}", err=True)


@command()
def schema() -> None:
    """Print the manifest's JSON Schema (for editors: completion, hover help, checks as you type)."""
    from preview_qa.manifest.schema import render

    click.echo(render(), nl=False)
