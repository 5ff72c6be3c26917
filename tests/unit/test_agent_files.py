"""`preview-qa init --agents`: the MCP server registered for Claude Code, Cursor and Codex, merged into files that list
other servers, environment references only (never a value), and a guide where each client looks; nothing overwritten."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest
import yaml

from preview_qa.errors import AgentFilesError
from preview_qa.starter.agents import (
    AGENTS_BEGIN,
    AGENTS_END,
    Launch,
    claude_code,
    codex,
    cursor,
    merge_agents_md,
    merge_json,
    merge_toml,
    skill,
)
from tests.conftest import clean_env, run_in_process

LAUNCH = Launch("preview-qa", ["mcp"], ["OPENAI_API_KEY", "QA_PASSWORD"])
OTHER = {"mcpServers": {"github": {"command": "github-mcp", "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"}}}, "inputs": [1]}
MANIFEST = """version: 1
tests:
  - name: Log in
    start: /login
    task: "Log in with <secret>password</secret> and check the dashboard."
    secrets: {password: QA_PASSWORD}
"""
FILES = [".mcp.json", ".cursor/mcp.json", ".codex/config.toml", "AGENTS.md", ".claude/skills/preview-qa/SKILL.md"]


def test_the_entry_is_merged_beside_the_other_servers_and_a_second_merge_changes_nothing() -> None:
    merged = merge_json(json.dumps(OTHER), claude_code(LAUNCH), ".mcp.json")
    assert merged is not None
    doc = json.loads(merged)
    assert doc["mcpServers"]["github"] == OTHER["mcpServers"]["github"] and doc["inputs"] == [1]
    assert doc["mcpServers"]["preview-qa"] == {
        "type": "stdio",
        "command": "preview-qa",
        "args": ["mcp"],
        "env": {"OPENAI_API_KEY": "${OPENAI_API_KEY:-}", "QA_PASSWORD": "${QA_PASSWORD:-}"},
    }
    assert merge_json(merged, claude_code(LAUNCH), ".mcp.json") is None


def test_cursor_refers_to_the_environment_in_its_own_syntax() -> None:
    doc = json.loads(merge_json(None, cursor(LAUNCH), ".cursor/mcp.json") or "")
    assert doc["mcpServers"]["preview-qa"]["env"] == {
        "OPENAI_API_KEY": "${env:OPENAI_API_KEY}",
        "QA_PASSWORD": "${env:QA_PASSWORD}",
    }


@pytest.mark.parametrize("text", ["{not json", "[1, 2]", '{"mcpServers": []}'])
def test_a_json_file_that_cannot_take_the_entry_is_refused(text: str) -> None:
    with pytest.raises(AgentFilesError, match=r"^\.mcp\.json .*by hand\.$"):
        merge_json(text, claude_code(LAUNCH), ".mcp.json")


def test_the_codex_table_is_appended_keeping_the_file_and_its_comments() -> None:
    before = '# team settings\nmodel = "o3"\n\n[mcp_servers.github]\ncommand = "github-mcp"  # ours\n'
    merged = merge_toml(before, codex(LAUNCH), ".codex/config.toml")
    assert merged is not None and merged.startswith(before)
    servers = tomllib.loads(merged)["mcp_servers"]
    assert servers["github"] == {"command": "github-mcp"}
    assert servers["preview-qa"] == {
        "command": "preview-qa",
        "args": ["mcp"],
        "env_vars": ["OPENAI_API_KEY", "QA_PASSWORD"],
        "startup_timeout_sec": 60,
        "tool_timeout_sec": 1800,
    }
    assert merge_toml(merged, codex(LAUNCH), ".codex/config.toml") is None


@pytest.mark.parametrize("text", ["model = ", 'mcp_servers = { github = { command = "x" } }\n'])
def test_a_codex_config_that_cannot_take_the_table_is_refused(text: str) -> None:
    with pytest.raises(AgentFilesError, match="by hand"):
        merge_toml(text, codex(LAUNCH), ".codex/config.toml")


def test_the_agents_md_section_is_appended_once_between_markers() -> None:
    merged = merge_agents_md("# Our project\n\nUse pnpm.")
    assert merged is not None and merged.startswith("# Our project\n\nUse pnpm.\n\n" + AGENTS_BEGIN)
    assert merged.rstrip().endswith(AGENTS_END) and "run_tests" in merged and "<untrusted-preview-text>" in merged
    assert merge_agents_md(merged) is None


def test_the_skill_has_the_front_matter_claude_code_reads() -> None:
    front = yaml.safe_load(skill().split("---\n")[1])
    assert front["name"] == "preview-qa" and "qa.yml" in front["description"]


def _project(tmp_path: Path) -> Path:
    (tmp_path / "qa.yml").write_text(MANIFEST, encoding="utf-8")
    (tmp_path / ".mcp.json").write_text(json.dumps(OTHER, indent=4), encoding="utf-8")
    return tmp_path


def test_init_agents_merges_into_an_existing_mcp_json_and_writes_the_rest(tmp_path: Path) -> None:
    project = _project(tmp_path)
    key = "sk-live-4242-do-not-write-me"
    done = run_in_process(["init", "--agents"], env=clean_env(OPENAI_API_KEY=key, QA_PASSWORD="hunter2-hunter2"), cwd=project)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[:5] == [
        "added preview-qa to .mcp.json",
        *(f"wrote {f}" for f in FILES[1:]),
    ]
    servers = json.loads((project / ".mcp.json").read_text(encoding="utf-8"))["mcpServers"]
    assert set(servers) == {"github", "preview-qa"}
    assert {"OPENAI_API_KEY", "QA_PASSWORD"} <= set(servers["preview-qa"]["env"])
    for name in FILES:
        text = (project / name).read_text(encoding="utf-8")
        assert key not in text and "hunter2" not in text  # references only
    for doc in (servers["preview-qa"], json.loads((project / FILES[1]).read_text(encoding="utf-8"))["mcpServers"]["preview-qa"]):
        assert all(re.fullmatch(r"\$\{(env:)?[A-Z_]+(:-)?\}", value) for value in doc["env"].values())

    again = run_in_process(["init", "--agents"], cwd=project)
    assert again.returncode == 0 and all(line.startswith("kept ") for line in again.stdout.splitlines()[:5])


def test_init_agents_writes_nothing_when_one_file_cannot_be_merged(tmp_path: Path) -> None:
    project = _project(tmp_path)
    (project / ".cursor").mkdir()
    (project / ".cursor" / "mcp.json").write_text("{oops", encoding="utf-8")
    done = run_in_process(["init", "--agents"], cwd=project)
    assert done.returncode == 2 and "mcp.json is not valid JSON" in done.stderr
    assert sorted(p.name for p in project.iterdir()) == [".cursor", ".mcp.json", "qa.yml"]
    assert json.loads((project / ".mcp.json").read_text(encoding="utf-8")) == OTHER


def test_init_agents_needs_a_manifest_and_refuses_force(tmp_path: Path) -> None:
    done = run_in_process(["init", "--agents"], cwd=tmp_path)
    assert done.returncode == 2 and "no qa.yml in ." in done.stderr and list(tmp_path.iterdir()) == []
    forced = run_in_process(["init", "--agents", "--force"], cwd=_project(tmp_path))
    assert forced.returncode == 2 and "never overwrites" in forced.stderr
