"""Tags and changed files pick the tests, end to end: through the CLI (--tag, --skip-tag, --changed-files), and as the
action runs it (inputs `tags` and `changed-only`, the pull request's files from a fake GitHub API, page by page)."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer

from preview_qa.demo.scripted_llm import ScriptedLLM
from preview_qa.selection.select import NOT_CHANGED
from tests.conftest import CliRun, clean_env, scripted_run
from tests.fakes.github import PR, REPO, FakeGitHub, Step, run_step, runner_env
from tests.site import DemoSite

pytestmark = pytest.mark.e2e

SCENARIOS = [{"match": "[quick]", "turns": [{"done": {"status": "pass", "reason": "Looks right."}}]}]
CLI_MANIFEST = """\
version: 1
defaults: {max_steps: 3, timeout: 120, tags: [regression]}
tests:
  - name: Home
    task: "[quick] Look at the home page."
    tags: [smoke]
  - name: Cart
    start: /product
    task: "[quick] Look at the cart."
    tags: [smoke, checkout]
    paths: ["src/cart/**"]
  - name: Login page
    start: /login
    task: "[quick] Look at the login page."
    tags: [smoke]
    paths: ["src/auth/*.py"]
  - name: Admin
    task: "[quick] never runs: not tagged smoke"
  - name: Slow search
    task: "[quick] never runs: tagged slow"
    tags: [smoke, slow]
"""


@pytest.fixture(scope="module")
def cli_run(tmp_path_factory: pytest.TempPathFactory, site: DemoSite) -> Iterator[CliRun]:
    folder = tmp_path_factory.mktemp("selection")
    (folder / "changed.txt").write_text("docs/readme.md\nsrc/auth/login.py\n", encoding="utf-8")
    with scripted_run(
        folder,
        site,
        CLI_MANIFEST,
        SCENARIOS,
        "--tag",
        "smoke",
        "--skip-tag",
        "slow",
        "--changed-files",
        str(folder / "changed.txt"),
    ) as run:
        yield run


def test_tags_and_changed_files_choose_what_runs(cli_run: CliRun) -> None:
    assert cli_run.exit_code == 0, cli_run.stderr[-3000:]
    assert [(t["name"], t["status"], t["reason"]) for t in cli_run.results["tests"]] == [
        ("Home", "passed", "Looks right."),
        ("Cart", "skipped", NOT_CHANGED),
        ("Login page", "passed", "Looks right."),
    ]
    assert cli_run.llm is not None and not any("never runs" in str(body) for body in cli_run.llm.requests)
    assert not any("the cart" in str(body) for body in cli_run.llm.requests)
    assert "preview-qa: 2 changed file(s) from " in cli_run.stderr


def test_the_skipped_reason_is_in_junit_the_console_and_the_report(cli_run: CliRun) -> None:
    suite = next(iter(cli_run.junit))
    cases = {c.name: c for c in suite}
    assert suite.tests == 3 and suite.skipped == 1 and set(cases) == {"Home", "Cart", "Login page"}
    assert cases["Cart"].result[0]._tag == "skipped" and cases["Cart"].result[0].message == NOT_CHANGED
    assert NOT_CHANGED in cli_run.stdout and "Admin" not in cli_run.stdout
    assert NOT_CHANGED in (cli_run.out / "report.html").read_text(encoding="utf-8")


# --- as the action runs it: changed-only asks the (fake) GitHub API for the pull request's files ---

ACTION_MANIFEST = """\
version: 1
defaults: {max_steps: 3, timeout: 120}
tests:
  - name: Checkout
    start: /product
    task: "[quick] Look at the product."
    tags: [checkout]
    paths: ["src/checkout/**"]
  - name: Docs
    task: "[quick] never runs: no changed docs"
    tags: [docs]
    paths: ["docs/**"]
  - name: Other
    task: "[quick] never runs: not in the tags input"
    tags: [other]
"""


@dataclass
class ActionRun:
    step: Step
    github: FakeGitHub
    llm_requests: list[object]


@pytest.fixture(scope="module")
def action_run(tmp_path_factory: pytest.TempPathFactory, site: DemoSite) -> Iterator[ActionRun]:
    workspace = tmp_path_factory.mktemp("action-selection") / "workspace"
    workspace.mkdir()
    (workspace / "qa.yml").write_text(textwrap.dedent(ACTION_MANIFEST), encoding="utf-8")
    # 130 files: the one under the Checkout test's paths is on the second page
    files = [{"filename": f"src/lib/file{i}.ts", "status": "modified"} for i in range(129)]
    files.append({"filename": "src/checkout/pay.ts", "status": "added"})
    server = HTTPServer(host="127.0.0.1", port=0)
    server.start()
    github = FakeGitHub(server, pull_files=files)
    try:
        with ScriptedLLM(SCENARIOS) as llm:
            env = clean_env(
                **runner_env(workspace, github.url),
                **{
                    "INPUT_BASE-URL": site.url,
                    "INPUT_LLM-BASE-URL": llm.url,
                    "INPUT_API-KEY": "sk-test",
                    "INPUT_MODEL": "scripted",
                    "INPUT_OUT": "results",
                    "INPUT_MANIFEST": "qa.yml",
                    "INPUT_TAGS": "checkout, docs",
                    "INPUT_SKIP-TAGS": "",
                    "INPUT_CHANGED-ONLY": "true",
                },
            )
            yield ActionRun(run_step(env, workspace), github, list(llm.requests))
    finally:
        server.stop()


def test_changed_only_lists_the_pull_requests_files_page_by_page_and_skips_the_rest(action_run: ActionRun) -> None:
    step = action_run.step
    assert step.exit_code == 0, step.output[-3000:]
    assert [(t["name"], t["status"], t["reason"]) for t in step.results["tests"]] == [
        ("Checkout", "passed", "Looks right."),
        ("Docs", "skipped", NOT_CHANGED),
    ]
    files_calls = [c for c in action_run.github.calls if c == ("GET", f"/repos/{REPO}/pulls/{PR}/files")]
    assert len(files_calls) == 2
    assert f"130 changed file(s) from the pull request's files (GitHub API, #{PR})" in step.output
    assert len(action_run.llm_requests) >= 1 and not any("never runs" in str(b) for b in action_run.llm_requests)


def test_the_summary_the_comment_and_the_outputs_say_what_was_skipped_and_why(action_run: ActionRun) -> None:
    step = action_run.step
    assert (step.outputs["passed"], step.outputs["skipped"], step.outputs["total"]) == ("1", "1", "2")
    row = f"| ⏭️ | Docs | {NOT_CHANGED} |"
    assert row in step.summary
    (comment,) = action_run.github.comments
    assert row in comment["body"]
    assert not step.log.named("error")  # a skipped test is green: no annotation


def test_an_empty_list_of_changed_files_runs_every_test_and_says_so(tmp_path: Path, site: DemoSite) -> None:
    (tmp_path / "changed.txt").write_text("\n", encoding="utf-8")
    with scripted_run(
        tmp_path, site, ACTION_MANIFEST, SCENARIOS, "--tag", "docs", "--changed-files", str(tmp_path / "changed.txt")
    ) as run:
        assert run.exit_code == 0, run.stderr[-3000:]
        assert [(t["name"], t["status"]) for t in run.results["tests"]] == [("Docs", "passed")]
        assert (
            f"preview-qa: the list of changed files ({tmp_path / 'changed.txt'}) is empty; running every test."
            in run.stderr.splitlines()
        )
