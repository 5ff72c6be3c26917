"""`preview-qa init`: a commented starter manifest and the pull request workflow that runs it; with --agents, only the
files that register the MCP server with coding agents and tell them how to use it, beside an existing qa.yml."""

from __future__ import annotations

import shutil
from pathlib import Path

import click

from preview_qa.cli.options import command, provider_option
from preview_qa.cli.values import UsageError
from preview_qa.providers import API_KEY_ENV, BASE_URL_ENV, Provider

# What `preview-qa mcp` and the runs it starts read from their environment, besides the provider's key and the secrets.
RUN_ENV = ("PREVIEW_QA_PROVIDER", "PREVIEW_QA_MODEL", "PREVIEW_QA_HTTP_CREDENTIALS")


@command()
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path), default=".")
@click.option("--force", is_flag=True, help="Overwrite the files if they exist (not with --agents: it never overwrites).")
@click.option(
    "--agents",
    is_flag=True,
    help="Write only the coding agents' files beside DIRECTORY's qa.yml: the MCP server for Claude Code, Cursor and "
    "Codex (merged into their config files) and a guide (a Claude Code skill, an AGENTS.md section).",
)
@provider_option("With --agents: the provider whose key variable the agents hand on to the server.")
def init(directory: Path, force: bool, agents: bool, provider: Provider) -> None:
    """Write a commented starter qa.yml and .github/workflows/preview-qa.yml into DIRECTORY (the repository's root)."""
    if agents:
        if force:
            raise UsageError("--agents never overwrites a file it does not merge; drop --force.")
        _agent_files(directory, provider)
        return
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


def _agent_files(directory: Path, provider: Provider) -> None:
    """Every agent file merged in memory first, then written: a file that cannot be merged leaves all as they were."""
    from preview_qa.manifest import loader
    from preview_qa.starter.agents import AGENT_FILES, Launch

    manifest = directory / "qa.yml"
    if not manifest.is_file():
        raise UsageError(
            f"no qa.yml in {directory}: --agents writes the agents' files beside a manifest; run `preview-qa init` first."
        )
    loaded = loader.load(manifest)
    secrets = [test.secret_env(p) for test in loaded.tests for p in test.secrets]
    keys = [*API_KEY_ENV[provider], *([BASE_URL_ENV[provider]] if provider in BASE_URL_ENV else [])]
    on_path = shutil.which("preview-qa") is not None
    launch = Launch(
        "preview-qa" if on_path else "python3",
        ["mcp"] if on_path else ["-m", "preview_qa", "mcp"],
        list(dict.fromkeys([*keys, *RUN_ENV, *secrets])),
    )
    planned = {}
    for target, merge in AGENT_FILES.items():
        path = directory / target
        text = merge(path.read_text(encoding="utf-8") if path.exists() else None, launch, str(path))
        planned[path] = (text, path.exists())
    for path, (text, existed) in planned.items():
        if text is None:
            click.echo(f"kept {path}: it already has preview-qa's {'entry' if path.suffix != '.md' else 'guide'}")
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        click.echo(f"{'added preview-qa to' if existed else 'wrote'} {path}")
    click.echo(
        f"Next: set {' and '.join(keys[:1] or ['your provider'])} (and the tests' secrets) in the environment the agent "
        "starts in, approve the server when the agent asks (Codex reads .codex/config.toml only in a trusted project), "
        "and keep .preview-qa/ out of git."
    )
