"""`preview-qa init`: a commented starter manifest and the pull request workflow that runs it."""

from __future__ import annotations

from pathlib import Path

import click

from preview_qa.cli.exit_codes import command
from preview_qa.cli.values import UsageError


@command()
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path), default=".")
@click.option("--force", is_flag=True, help="Overwrite the files if they exist.")
def init(directory: Path, force: bool) -> None:
    """Write a commented starter qa.yml and .github/workflows/preview-qa.yml into DIRECTORY (the repository's root)."""
    from preview_qa.starter import starter_files

    planned = {directory / target: text for target, text in starter_files().items()}
    existing = [str(path) for path in planned if path.exists()]
    if existing and not force:
        raise UsageError(
            f"{' and '.join(existing)} already exist{'s' if len(existing) == 1 else ''}; nothing was written "
            "(--force overwrites)."
        )
    for path, text in planned.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        click.echo(f"wrote {path}")
    click.echo(
        "Next: add the repository secrets OPENAI_API_KEY and QA_PASSWORD, point base-url in the workflow at your "
        "previews, and write your own tests in qa.yml (`preview-qa validate --offline` checks it)."
    )
