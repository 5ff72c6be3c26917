"""`preview-qa export`: a test that passed, as an ordinary Playwright test file."""

from __future__ import annotations

from pathlib import Path

import click

from preview_qa.cli.options import command, provider_option
from preview_qa.cli.values import UsageError
from preview_qa.manifest import loader
from preview_qa.providers import Provider


@command("export")
@click.argument("manifest", type=click.Path(dir_okay=False, path_type=Path), default="qa.yml")
@click.option("--test", "name", required=True, metavar="NAME", help="The test to export (its name in the manifest).")
@click.option(
    "--results",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    help="A results folder (`run --out`) in which the test passed after an agent run.",
)
@click.option(
    "--cache",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    help="The replay cache (`run --cache`) that holds the test's recording.",
)
@provider_option("With --cache: the provider of the run that recorded it (the cache keeps one recording per model).")
@click.option("--model", help="With --cache: the model of the run that recorded it (provider default if unset).")
@click.option(
    "--lang",
    type=click.Choice(["python", "ts"]),
    default="python",
    show_default=True,
    help="python: a pytest-playwright test; ts: an @playwright/test spec.",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, allow_dash=True, path_type=Path),
    help="The file to write (- for stdout); default: test_<name>.py or <name>.spec.ts here.",
)
@click.option("--force", is_flag=True, help="Overwrite the file if it exists.")
def export(
    manifest: Path,
    name: str,
    results: Path | None,
    cache: Path | None,
    provider: Provider,
    model: str | None,
    lang: str,
    output: Path | None,
    force: bool,
) -> None:
    """Write a test that passed as an ordinary Playwright test you can commit and run without preview-qa or an LLM."""
    from preview_qa.engine.replay_cache import RecordingCache
    from preview_qa.export import Language, export_test, file_name, sources

    if (results is None) == (cache is None):
        raise UsageError("give either --results (a results folder the test passed in) or --cache (the replay cache).")
    loaded = loader.load(manifest)
    spec = sources.find_test(loaded, name)
    source = (
        sources.from_results(results, spec)
        if results
        else sources.from_cache(RecordingCache(cache or Path(), loaded, provider, model), spec)
    )
    text = export_test(spec, source.history, source.origin, f"{manifest}:{spec.line}", Language(lang), source.goals)
    if output == Path("-"):
        click.echo(text, nl=False)
        return
    path = output or Path(file_name(spec.name, Language(lang)))
    if path.exists() and not force:
        raise UsageError(f"{path} already exists; nothing was written (--force overwrites).")
    path.write_text(text, encoding="utf-8")
    todos = sum(1 for line in text.splitlines() if line.lstrip().startswith(("# TODO", "// TODO")))
    click.echo(f"wrote {path}" + (f" ({todos} TODO(s) to write by hand)" if todos else ""))
