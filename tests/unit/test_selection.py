"""Picking tests: --only, --tag/--skip-tag and changed files against each test's paths, before --shard; and the bad inputs
(an unknown tag, a missing list of changed files) as the CLI reports them: one line, exit 2, nothing run."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from preview_qa.config import RunConfig
from preview_qa.engine.agent_port import AgentRequest
from preview_qa.errors import SelectionError
from preview_qa.manifest import loader as manifest
from preview_qa.reporters.output.merge import merge_runs
from preview_qa.results import Status
from preview_qa.selection.select import NOT_CHANGED, select
from preview_qa.verdict.agent_run import AgentRun
from tests.builders import PASS, run
from tests.conftest import clean_env, run_in_process

MANIFEST = textwrap.dedent("""\
    version: 1
    defaults: {tags: [regression]}
    tests:
      - name: Home
        task: t
        tags: [smoke]
      - name: Checkout
        task: t
        tags: [smoke, checkout]
        paths: ["src/checkout/**", "app/routes/cart.*"]
      - name: Docs
        task: t
        paths: ["*.md", "!CHANGELOG.md"]
      - name: Slow search
        task: t
        tags: [smoke, slow]
        paths: [src/search/]
    """)
SPEC = manifest.loads(MANIFEST, "qa.yml")


def chosen(**config: Any) -> tuple[list[str], dict[str, str]]:
    selection = select(SPEC, RunConfig(manifest=Path("qa.yml"), base_url="http://x.test", **config))
    return [t.name for t in selection.tests], selection.skipped


def test_k_picks_the_tests_whose_name_contains_any_word_case_ignored() -> None:
    assert chosen(keywords=["SEARCH"])[0] == ["Slow search"]
    assert chosen(keywords=["o"])[0] == ["Home", "Checkout", "Docs", "Slow search"]
    assert chosen(keywords=["home", "docs"])[0] == ["Home", "Docs"]  # repeated: any of them
    assert chosen(keywords=["o"], only=["Docs"])[0] == ["Docs"] and chosen(keywords=["o"], tags=["slow"])[0] == ["Slow search"]


def test_tags_pick_any_of_the_given_and_skip_tags_leave_out() -> None:
    assert chosen(tags=["smoke"])[0] == ["Home", "Checkout", "Slow search"]
    assert chosen(tags=["checkout", "slow"])[0] == ["Checkout", "Slow search"]
    assert chosen(tags=["smoke"], skip_tags=["slow"])[0] == ["Home", "Checkout"]
    assert chosen(tags=["regression"])[0] == ["Docs"]  # defaults' tags: a test's own tags replace them
    assert chosen(only=["Home", "Docs"], tags=["smoke"])[0] == ["Home"]  # every filter given must hold
    assert chosen() == (["Home", "Checkout", "Docs", "Slow search"], {})


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"tags": ["smok"]}, "--tag 'smok': no test in qa.yml has this tag (its tags: checkout, regression, slow, smoke)."),
        ({"skip_tags": ["flaky"]}, "--skip-tag 'flaky': no test in qa.yml has this tag"),
        ({"only": ["Hmoe"]}, "--only names no test called 'Hmoe'; did you mean 'Home'?"),
        ({"only": ["slow search"]}, "--only names no test called 'slow search'; did you mean 'Slow search'?"),  # exact
        ({"only": ["Basket"]}, "--only names no test called 'Basket'; check the names in qa.yml."),
        ({"keywords": ["chekout"]}, "-k 'chekout': no test's name contains it (case ignored); did you mean 'Checkout'?"),
        ({"keywords": ["basket"]}, "-k 'basket': no test's name contains it (case ignored); check the names in qa.yml."),
        ({"only": ["Docs"], "tags": ["smoke"]}, "no test is left to run once --only, -k, --tag and --skip-tag are applied"),
    ],
)
def test_a_filter_that_names_nothing_is_an_error(config: dict[str, Any], message: str) -> None:
    with pytest.raises(SelectionError, match=None) as caught:
        chosen(**config)
    assert str(caught.value).startswith(message)


@pytest.mark.parametrize(
    ("changed", "runs"),
    [
        (["src/checkout/pay.py"], {"Home", "Checkout"}),
        (["app/routes/cart.tsx"], {"Home", "Checkout"}),
        (["README.md"], {"Home", "Docs"}),
        (["docs/guide/intro.md"], {"Home", "Docs"}),  # a glob without a slash matches at any depth, as in .gitignore
        (["CHANGELOG.md"], {"Home"}),  # the negation takes it back
        (["src/search/deep/index.py"], {"Home", "Slow search"}),  # `src/search/`: everything under that folder
        (["lib/src/search/index.py"], {"Home"}),  # a slash inside a glob anchors it at the root, as in .gitignore
        (["src/checkout"], {"Home"}),  # the folder itself is not a file under it
        (["src/search.py", "app/routes/cart"], {"Home"}),
        ([], {"Home"}),  # the CLI never passes an empty list (it runs everything and says so); the rule itself is plain
    ],
)
def test_changed_files_run_the_tests_whose_paths_match_and_every_test_without_paths(changed: list[str], runs: set[str]) -> None:
    names, skipped = chosen(changed_files=changed)
    assert names == ["Home", "Checkout", "Docs", "Slow search"]  # all reported
    assert set(names) - set(skipped) == runs and set(skipped.values()) <= {NOT_CHANGED}


@given(
    changed=st.lists(st.sampled_from(["src/checkout/a.py", "README.md", "src/search/x", "other"]), max_size=3),
    count=st.integers(1, 4),
)
def test_shards_share_the_selected_tests_each_exactly_once(changed: list[str], count: int) -> None:
    everything = chosen(changed_files=changed)
    shards = [chosen(changed_files=changed, shard=(i, count)) for i in range(1, count + 1)]
    assert sorted(n for names, _ in shards for n in names) == sorted(everything[0])
    assert {k: v for _, skipped in shards for k, v in skipped.items()} == everything[1]
    to_run = [len(set(names) - set(skipped)) for names, skipped in shards]
    assert max(to_run) - min(to_run) <= 1  # the shard balances what runs, not what is skipped


def test_skipped_by_the_change_is_reported_like_a_manifest_skip_and_merges_across_shards() -> None:
    async def agent(request: AgentRequest) -> AgentRun:
        return AgentRun(done=PASS, steps=1)

    shards = [run(SPEC.tests, agent, changed_files=["src/checkout/a.py"], shard=(i, 2))[0] for i in (1, 2)]
    merged = merge_runs(shards)
    assert [(t.name, t.status, t.reason) for t in merged.tests] == [
        ("Home", Status.PASSED, "fine"),
        ("Checkout", Status.PASSED, "fine"),
        ("Docs", Status.SKIPPED, NOT_CHANGED),
        ("Slow search", Status.SKIPPED, NOT_CHANGED),
    ]
    assert all(t.execution == "none" and t.steps == 0 for t in merged.tests if t.status is Status.SKIPPED)


# --- through the CLI: one line, exit 2, nothing written ---


def _run(tmp_path: Path, *args: str, stdin: str | None = None) -> tuple[int, str, str]:
    (tmp_path / "qa.yml").write_text(MANIFEST, encoding="utf-8")
    proc = run_in_process(
        ["run", "qa.yml", "--base-url", "http://127.0.0.1:9", "--api-key", "k", "--out", "out", *args],
        env=clean_env(),
        cwd=tmp_path,
    )
    assert not (tmp_path / "out").exists()
    return proc.returncode, proc.stdout, proc.stderr


TAGS = "(its tags: checkout, regression, slow, smoke)."


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--tag", "smoke,chekout"], f"--tag 'chekout': no test in qa.yml has this tag {TAGS}"),
        (["--skip-tag", "flaky"], f"--skip-tag 'flaky': no test in qa.yml has this tag {TAGS}"),
        (
            ["--changed-files", "nope.txt"],
            "--changed-files nope.txt: no such file; give a file with one changed path a line, or - to read them from stdin.",
        ),
    ],
)
def test_bad_selection_input_is_one_line_and_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    code, stdout, stderr = _run(tmp_path, *args)
    assert (code, stdout, stderr) == (2, "", f"preview-qa: error: {message}\n")


def test_the_action_input_tags_is_a_comma_or_space_separated_list(tmp_path: Path) -> None:
    (tmp_path / "qa.yml").write_text(MANIFEST, encoding="utf-8")
    proc = run_in_process(
        ["run", "qa.yml", "--base-url", "http://127.0.0.1:9", "--api-key", "k"],
        cwd=tmp_path,
        env=clean_env(**{"INPUT_TAGS": "smoke, nope", "INPUT_SKIP-TAGS": ""}),
    )
    assert proc.returncode == 2 and "--tag 'nope': no test in qa.yml has this tag" in proc.stderr


def test_an_invalid_glob_or_a_path_outside_the_repository_fails_validate(tmp_path: Path) -> None:
    for paths, message in ((["src/[z-a]/**"], "is not a valid gitignore-style glob"), (["../lib/**"], "points outside")):
        (tmp_path / "qa.yml").write_text(f"version: 1\ntests:\n  - name: a\n    task: t\n    paths: {json.dumps(paths)}\n")
        proc = run_in_process(["validate", "qa.yml"], cwd=tmp_path)
        assert proc.returncode == 2 and proc.stderr.startswith("preview-qa: error: qa.yml:5: tests[0].paths: '")
        assert message in proc.stderr and proc.stderr.count("\n") == 1
