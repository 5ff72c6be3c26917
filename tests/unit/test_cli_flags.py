"""Flags as people already know them: --headed as Playwright names it (--headful still works, not shown), -k,
--browser-path refused when it names nothing, one meaning of --max-cost-usd (per test: `plan` and `mcp` refuse it,
naming --run-max-cost-usd), --wait-timeout waiting by default as the action does, and `demo --help` naming the folder
the demo writes."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import clean_env, run_in_process

MANIFEST = "version: 1\ntests:\n  - name: Home page loads\n    task: Open the home page.\n"


def help_of(*command: str) -> str:
    done = run_in_process([*command, "--help"])
    assert done.returncode == 0, done.stderr
    return " ".join(done.stdout.split())


def test_run_s_help_shows_the_flags_people_know_and_not_the_old_spelling() -> None:
    shown = help_of("run")
    assert "--headed Show the browser windows." in shown and "--headful" not in shown
    assert "-k TEXT" in shown and "--browser-path PATH" in shown
    assert "--wait-timeout" in shown and "[default: 120.0; x>=0]" in shown.split("--wait-timeout", 1)[1].split("--", 1)[0]
    assert "[default: demo-results]" in help_of("demo")


@pytest.mark.parametrize("spelling", ["--headed", "--headful"])
def test_both_spellings_of_headed_are_taken(tmp_path: Path, spelling: str) -> None:
    (tmp_path / "qa.yml").write_text(MANIFEST, encoding="utf-8")
    env = {**clean_env(), "OPENAI_API_KEY": "sk-unused"}
    done = run_in_process(
        ["run", "qa.yml", "--base-url", "http://127.0.0.1:9", spelling, "--browser-path", "/nowhere/chrome"], env, tmp_path
    )
    assert done.returncode == 2 and "--browser-path /nowhere/chrome: no such file" in done.stderr, done.stderr
    assert not (tmp_path / "preview-qa-results").exists()  # refused before anything ran or was written


@pytest.mark.parametrize("command", [["plan", "qa.yml", "--base-url", "http://127.0.0.1:9"], ["mcp"]])
def test_max_cost_usd_means_per_test_everywhere_so_plan_and_mcp_refuse_it(tmp_path: Path, command: list[str]) -> None:
    (tmp_path / "qa.yml").write_text(MANIFEST, encoding="utf-8")
    done = run_in_process([*command, "--max-cost-usd", "1"], cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "--max-cost-usd was" in done.stderr and "give it as --run-max-cost-usd" in done.stderr, done.stderr
    assert "--run-max-cost-usd" in help_of(command[0]) and "--max-cost-usd" not in help_of(command[0]).replace(
        "--run-max-cost-usd", ""
    )
