"""What `preview-qa init --agents` writes beside a team's qa.yml: the MCP server registered for Claude Code
(.mcp.json), Cursor (.cursor/mcp.json) and Codex (.codex/config.toml), merged into a file that lists other servers,
with environment references only; and a guide where each client looks (a Claude Code skill, an AGENTS.md section).
Pure text in, text out: nothing here touches a file."""

from __future__ import annotations

import json
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from importlib.resources import files
from typing import Any

from preview_qa.errors import AgentFilesError

SERVER = "preview-qa"  # the entry's name in every client's file
GUIDE_TITLE = "Testing the app's preview with preview-qa"
SKILL_DESCRIPTION = (
    "Run this project's browser tests (qa.yml) against a running preview of the app with preview-qa's MCP tools, read "
    "why a test failed, and draft tests for changed pages. Use after a change a user could see, before a pull request."
)
AGENTS_BEGIN, AGENTS_END = "<!-- preview-qa: begin -->", "<!-- preview-qa: end -->"
CODEX_STARTUP_S = 60  # Codex waits 10 s by default for a server to start; the MCP SDK's import alone took 5 s at load 25
CODEX_TOOL_S = 1800  # and 60 s for a call: a run of tests takes minutes


@dataclass(frozen=True)
class Launch:
    """How a client starts the server, and the environment variables it hands on (by name, never a value)."""

    command: str
    args: list[str]
    env: list[str]


def claude_code(launch: Launch) -> dict[str, Any]:
    """Claude Code's .mcp.json entry: `${VAR:-}` expands to the variable, or to nothing when it is not set (a bare
    `${VAR}` that is not set makes Claude Code drop the whole file)."""
    return {"type": "stdio", "command": launch.command, "args": launch.args, "env": {n: f"${{{n}:-}}" for n in launch.env}}


def cursor(launch: Launch) -> dict[str, Any]:
    """Cursor's .cursor/mcp.json entry: `${env:VAR}` is Cursor's reference to a variable of its environment."""
    return {"command": launch.command, "args": launch.args, "env": {n: f"${{env:{n}}}" for n in launch.env}}


def codex(launch: Launch) -> str:
    """Codex's [mcp_servers.preview-qa] table: `env_vars` names the variables Codex forwards from its environment
    (it starts a server with a few safe ones only), and the timeouts a run of tests needs."""
    quoted = ", ".join(json.dumps(name) for name in launch.env)
    return (
        f"[mcp_servers.{SERVER}]\n"
        f"command = {json.dumps(launch.command)}\n"
        f"args = [{', '.join(json.dumps(a) for a in launch.args)}]\n"
        f"env_vars = [{quoted}]\n"
        f"startup_timeout_sec = {CODEX_STARTUP_S}\n"
        f"tool_timeout_sec = {CODEX_TOOL_S}\n"
    )


def merge_json(existing: str | None, entry: dict[str, Any], where: str) -> str | None:
    """The client's JSON file with the `preview-qa` entry added under `mcpServers`, every other key kept; None when it
    already has one (left as the team set it)."""
    try:
        doc = {} if existing is None or not existing.strip() else json.loads(existing)
    except ValueError as e:
        raise AgentFilesError(f"{where} is not valid JSON ({e}); fix it, or add the preview-qa entry by hand.") from None
    servers = doc.setdefault("mcpServers", {}) if isinstance(doc, dict) else None
    if not isinstance(servers, dict):
        raise AgentFilesError(f"{where} has no `mcpServers` object to add to; add the preview-qa entry by hand.")
    if SERVER in servers:
        return None
    servers[SERVER] = entry
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def merge_toml(existing: str | None, table: str, where: str) -> str | None:
    """The Codex config with the [mcp_servers.preview-qa] table appended, the rest of the file (its comments too)
    kept as it was; None when it already has one."""
    text = existing or ""
    try:
        servers = tomllib.loads(text).get("mcp_servers", {})
    except tomllib.TOMLDecodeError as e:
        raise AgentFilesError(f"{where} is not valid TOML ({e}); fix it, or add the preview-qa table by hand.") from None
    if isinstance(servers, dict) and SERVER in servers:
        return None
    merged = text + ("\n" if text and not text.endswith("\n") else "") + ("\n" if text.strip() else "") + table
    try:
        tomllib.loads(merged)
    except tomllib.TOMLDecodeError:  # e.g. mcp_servers written as an inline table, which a table cannot extend
        raise AgentFilesError(f"{where} defines mcp_servers in a way a new table cannot extend; add the table by hand.") from None
    return merged


def merge_agents_md(existing: str | None) -> str | None:
    """AGENTS.md with the preview-qa section appended between its markers; None when the section is there already."""
    text = existing or ""
    if AGENTS_BEGIN in text:
        return None
    section = f"{AGENTS_BEGIN}\n## {GUIDE_TITLE}\n\n{guide()}{AGENTS_END}\n"
    return text + ("\n" if text and not text.endswith("\n") else "") + ("\n" if text.strip() else "") + section


def skill() -> str:
    """The Claude Code skill (.claude/skills/preview-qa/SKILL.md): the same guide, with the skill's front matter."""
    return f"---\nname: {SERVER}\ndescription: {SKILL_DESCRIPTION}\n---\n\n# {GUIDE_TITLE}\n\n{guide()}"


def guide() -> str:
    return files(__package__ or __name__).joinpath("guide.md").read_text(encoding="utf-8")


# Each agent file: where it goes, and how its new text is made from what is there (None: nothing to write).
Merge = Callable[[str | None, Launch, str], str | None]
AGENT_FILES: dict[str, Merge] = {
    ".mcp.json": lambda text, launch, where: merge_json(text, claude_code(launch), where),
    ".cursor/mcp.json": lambda text, launch, where: merge_json(text, cursor(launch), where),
    ".codex/config.toml": lambda text, launch, where: merge_toml(text, codex(launch), where),
    "AGENTS.md": lambda text, _launch, _where: merge_agents_md(text),
    ".claude/skills/preview-qa/SKILL.md": lambda text, _launch, _where: skill() if text is None else None,
}
