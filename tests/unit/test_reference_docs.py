"""The reference pages say what the code does: the CLI reference is every command's `--help`, the action's table is
action.yml's inputs and outputs (both written by `python -m tests.reference_docs`), and the exit-code and --fail-on
tables name every code and word there is."""

from __future__ import annotations

import re

from preview_qa.config import FailOn
from preview_qa.lifecycle import ExitCode
from tests.reference_docs import ACTION_PAGE, CLI_PAGE, action_reference, between, cli_reference

FIX = "run `python -m tests.reference_docs` to write it again"


def test_the_cli_reference_is_every_command_s_help() -> None:
    assert between(CLI_PAGE, "cli") == cli_reference(), FIX


def test_the_action_s_inputs_and_outputs_table_is_action_yml_s() -> None:
    assert between(ACTION_PAGE, "action") == action_reference(), FIX


def test_the_exit_code_and_fail_on_tables_name_every_code_and_word() -> None:
    page = CLI_PAGE.read_text(encoding="utf-8")
    codes = page.split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    assert [int(c) for c in re.findall(r"^\| `(\d+)` \|", codes, re.M)] == sorted(ExitCode)
    words = page.split("## What fails the run", 1)[1].split("\n## ", 1)[0]
    assert re.findall(r"^\| `([a-z]+)` \|", words, re.M) == [rule.value for rule in FailOn]
