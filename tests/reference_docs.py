"""The generated reference pages: every command's flags from click (docs/cli.md) and the action's inputs and outputs
from action.yml (docs/github-actions.md), each between its markers. tests/unit/test_reference_docs.py checks that the
pages hold what the code says; `python -m tests.reference_docs` writes them after a flag or an input changed."""

from __future__ import annotations

import re
from pathlib import Path

import click
import yaml

ROOT = Path(__file__).resolve().parents[1]
CLI_PAGE = ROOT / "docs" / "cli.md"
ACTION_PAGE = ROOT / "docs" / "github-actions.md"


def cli_reference() -> str:
    """Each command: its usage, what it does, and a row per flag (its help as `--help` prints it, and the variables
    it falls back to); a flag said the same way by an earlier command points there."""
    from preview_qa.cli import main

    out: list[str] = []
    said_by: dict[str, str] = {}  # a flag's row -> the first command that has it
    with click.Context(main, info_name="preview-qa") as group:
        for name in sorted(main.commands):
            command = main.commands[name]
            with click.Context(command, info_name=name, parent=group) as ctx:
                usage = " ".join(command.collect_usage_pieces(ctx))
                out += [f"### `preview-qa {name}`", "", f"`preview-qa {name} {usage}`", ""]
                out += [" ".join((command.help or "").split()), "", "| Flag | What it does |", "|---|---|"]
                for param in command.get_params(ctx):
                    record = param.get_help_record(ctx)
                    if record is None or param.name == "help":
                        continue
                    flag, said = record
                    envvars = [] if isinstance(param, click.Option) and param.hidden else _envvars(param)
                    also = f" Environment: {', '.join(f'`{v}`' for v in envvars)}." if envvars else ""
                    row = f"{_cell(' '.join(said.split()))}{also}"
                    first = said_by.setdefault(f"{flag} {row}", name)
                    out.append(f"| `{_cell(flag)}` | {row if first == name else f'As in [{first}](#preview-qa-{first}).'} |")
                out.append("")
    return "\n".join(out)


def action_reference() -> str:
    """The action's inputs (default, description) and outputs, as action.yml declares them."""
    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    out = ["| Input | Default | What it does |", "|---|---|---|"]
    for name, spec in action["inputs"].items():
        default = "required" if spec.get("required") else f"`{spec['default']}`" if spec.get("default") not in (None, "") else ""
        out.append(f"| `{name}` | {default} | {_cell(' '.join(str(spec['description']).split()))} |")
    out += ["", "| Output | What it holds |", "|---|---|"]
    out += [f"| `{name}` | {_cell(' '.join(str(spec['description']).split()))} |" for name, spec in action["outputs"].items()]
    return "\n".join(out) + "\n"


def _envvars(param: click.Parameter) -> list[str]:
    found = param.envvar if isinstance(param.envvar, list | tuple) else [param.envvar] if param.envvar else []
    return [str(v) for v in found]


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def between(page: Path, marker: str) -> str:
    """What `page` holds between `<!-- generated: marker -->` and `<!-- /generated: marker -->`."""
    text = page.read_text(encoding="utf-8")
    found = re.search(rf"<!-- generated: {marker} -->\n(.*?)<!-- /generated: {marker} -->", text, re.S)
    assert found, f"{page} has no generated {marker} section"
    return found.group(1)


def _write(page: Path, marker: str, body: str) -> None:
    text = page.read_text(encoding="utf-8")
    old = between(page, marker)
    start = f"<!-- generated: {marker} -->\n"
    page.write_text(text.replace(start + old, start + body), encoding="utf-8")


if __name__ == "__main__":
    _write(CLI_PAGE, "cli", cli_reference())
    _write(ACTION_PAGE, "action", action_reference())
