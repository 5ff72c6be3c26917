"""End to end as the action runs it: `preview-qa run` configured only by INPUT_* variables inside a simulated GitHub
runner, real Chromium, a hostile scripted agent, a fake GitHub API for the PR comment; then an unreachable preview."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from pytest_httpserver import HTTPServer

from preview_qa.demo.scripted_llm import ScriptedLLM
from tests.conftest import DEMO_PASSWORD, clean_env
from tests.e2e.processes import closed_port
from tests.fakes.github import TOKEN, FakeGitHub, Step, run_step, runner_env
from tests.site import DemoSite

pytestmark = pytest.mark.e2e

MANIFEST = """\
version: 1
defaults: {max_steps: 4, timeout: 120}
tests:
  - name: Log in works
    start: /login
    task: "[login] Log in with password <secret>pw</secret> and check the dashboard."
    secrets: {pw: DEMO_PASSWORD}
    expect: {url: /dashboard}
  - name: "Checkout: hostile, ::error::pwned-by-name"
    start: /product
    task: "[hostile] Pay for the product."
  - name: Later
    task: never runs
    skip: not ready
"""
HOSTILE_NAME = "Checkout: hostile, ::error::pwned-by-name"  # `:` and `,` end a property unless escaped
HOSTILE_REASON = "Checkout broke\n::error::pwned\n::add-mask::Log in\n##[error]legacy pwned"
API_KEY = "sk-e2e-test-key-98765"
BYPASS = "bypass-token-from-vercel-4711"
SCENARIOS = [
    {
        "match": "[login]",
        "turns": [
            {
                "actions": [
                    {"input": {"element": "Email", "text": "demo@acme.test"}},
                    {"input": {"element": "Password", "text": "<secret>pw</secret>"}},
                    {"click": {"element": "Log in"}},
                ]
            },
            {"done": {"status": "pass", "reason": "Signed in."}},
        ],
    },
    {"match": "[hostile]", "turns": [{"done": {"status": "fail", "reason": HOSTILE_REASON}}]},
]


@dataclass
class Runs:
    ok: Step
    unreachable: Step
    github: FakeGitHub
    comment_after_first_run: str
    llm_requests_in_second_run: int


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, site: DemoSite) -> Iterator[Runs]:
    workspace = tmp_path_factory.mktemp("action") / "workspace"
    workspace.mkdir()
    (workspace / "qa.yml").write_text(textwrap.dedent(MANIFEST), encoding="utf-8")
    server = HTTPServer(host="127.0.0.1", port=0)
    server.start()
    github = FakeGitHub(server)
    try:
        with ScriptedLLM(SCENARIOS) as llm:
            env = clean_env(
                **runner_env(workspace, github.url),
                **{
                    "INPUT_BASE-URL": site.url,
                    "INPUT_LLM-BASE-URL": llm.url,
                    "INPUT_API-KEY": API_KEY,
                    "INPUT_MODEL": "scripted",
                    "INPUT_OUT": "results",
                    "INPUT_COMMENT": "true",
                    "INPUT_FAIL-ON": "errored",
                    "INPUT_WAIT-TIMEOUT": "30",
                    "INPUT_CONCURRENCY": "2",
                    "INPUT_TRACE": "retain-on-failure",  # action.yml's default
                    "INPUT_MANIFEST": "qa.yml",
                    "INPUT_EXTRA-HEADERS": f"x-vercel-protection-bypass: {BYPASS}\n\nX-Preview-QA: e2e\n",
                },
            )
            ok = run_step(env, workspace)
            first_comment = github.comments[0]["body"] if github.comments else ""
            seen = len(llm.requests)
            unreachable = run_step(
                {**env, "INPUT_BASE-URL": f"http://127.0.0.1:{closed_port()}", "INPUT_WAIT-TIMEOUT": "3"}, workspace
            )
            yield Runs(ok, unreachable, github, first_comment, len(llm.requests) - seen)
    finally:
        server.stop()


def test_verdicts_and_exit_code_follow_fail_on(runs: Runs) -> None:
    statuses = {t["name"]: (t["status"], t["reason"]) for t in runs.ok.results["tests"]}
    assert statuses["Log in works"] == ("passed", "Signed in.") and statuses["Later"] == ("skipped", "not ready")
    assert statuses[HOSTILE_NAME][0] == "failed" and "::error::pwned ::add-mask::Log in" in statuses[HOSTILE_NAME][1]
    assert runs.ok.exit_code == 0, runs.ok.output[-3000:]  # fail-on: errored, and nothing errored


def test_secrets_are_masked_first_and_the_agents_text_is_inert(runs: Runs) -> None:
    log = runs.ok.log
    masks = {c.message for c in log.named("add-mask")}
    assert {API_KEY, BYPASS, "e2e", TOKEN, DEMO_PASSWORD} <= masks
    first_other = next(i for i, kind in enumerate(log.order) if kind != "mask")
    assert "mask" not in log.order[first_other:]
    assert [c.name for c in log.commands if c.name != "add-mask"] == ["stop-commands", "error"]
    # The runner treats `##[error]` anywhere in a line as a command: these lines were printed, and stayed inert.
    hostile = [line for line in log.displayed if "##[error]legacy pwned" in line]
    assert len(hostile) >= 2 and any("::add-mask::Log in" in line for line in hostile)
    for secret in (API_KEY, DEMO_PASSWORD, BYPASS):
        assert all(line.startswith("::add-mask::") for line in runs.ok.output.splitlines() if secret in line)


def test_one_annotation_at_the_failing_tests_line(runs: Runs) -> None:
    (error,) = runs.ok.log.named("error")
    assert error.properties == {"file": "qa.yml", "line": "9", "title": HOSTILE_NAME}
    assert error.message == runs.ok.results["tests"][1]["reason"] and "::error::pwned" in error.message


def test_outputs_summary_and_the_sticky_comment(runs: Runs) -> None:
    assert runs.ok.outputs == {
        "passed": "1",
        "failed": "1",
        "errored": "0",
        "skipped": "1",
        "total": "3",
        "flaky": "0",
        "healed": "0",
        "changed": "0",
        "vacuous": "0",
        "unverified": "0",
        "regressions": "0",
        "results-path": "results/results.json",
        "junit-path": "results/junit.xml",
        "exit-code": "0",  # the CLI's, written last: fail-on errored, and nothing errored
    }
    assert "| ✅ | Log in works | Signed in. |" in runs.ok.summary
    assert "❌ **Checkout\\: hostile, \\:\\:error\\:\\:pwned-by-name** · qa.yml\\:9" in runs.ok.summary  # its card
    assert runs.comment_after_first_run.startswith("<!-- preview-qa: qa.yml -->\n### ❌ preview-qa: failed")
    assert DEMO_PASSWORD not in runs.comment_after_first_run + runs.ok.summary


def test_unreachable_preview_errors_every_test_without_an_llm_call_and_says_so_once(runs: Runs) -> None:
    step = runs.unreachable
    assert (step.exit_code, step.outputs["exit-code"], step.results["stop_reason"]) == (1, "1", "preview-unreachable")
    assert {t["status"] for t in step.results["tests"]} == {"errored"}
    assert all(t["reason"].startswith("preview unreachable: ") and t["steps"] == 0 for t in step.results["tests"])
    assert runs.llm_requests_in_second_run == 0
    (error,) = step.log.named("error")
    assert error.message.startswith("3 test(s) did not run: preview unreachable: ")
    assert step.outputs["errored"] == "3" and step.summary.count("> [!WARNING]") == 1


def test_the_second_run_updated_the_same_comment(runs: Runs) -> None:
    assert len(runs.github.comments) == 1
    assert "preview unreachable" in runs.github.comments[0]["body"]
    methods = [method for method, _ in runs.github.calls]
    assert methods.count("POST") == 1 and methods.count("PATCH") == 1
