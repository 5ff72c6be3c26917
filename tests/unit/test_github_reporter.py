"""The GitHub reporter as a runner sees it: masks first, inert echoed text, annotations, summary, outputs, PR comment."""

from __future__ import annotations

import base64
import io
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from pytest_httpserver import HTTPServer

from preview_qa import cli
from preview_qa.config import FailOn, RunConfig
from preview_qa.events import Observed, RunFinished, RunStarted, StepRecorded, TestFinished
from preview_qa.exits import RunEnded, exit_code
from preview_qa.reporters import Dispatcher
from preview_qa.reporters.artifacts import ArtifactsReporter
from preview_qa.reporters.console import ConsoleReporter
from preview_qa.reporters.github.commands import escape_data, escape_property
from preview_qa.reporters.github.markdown import render_markdown
from preview_qa.reporters.github.reporter import GitHubReporter
from preview_qa.reporters.output.files import test_dir as folder_of
from preview_qa.results import ExpectationOutcome, RunResult, Status, StepInWords, StopReason, TestResult
from preview_qa.secrets.redact import Redactor
from tests import builders
from tests.fakes.github import PR, FakeGitHub, StepLog, read_log, read_outputs, rendered, runner_env, visible

HOSTILE = (
    "Checkout broke\n::error::pwned\n::add-mask::Log in\n  ::set-output name=x::y\r\n##[error]legacy %0A|`<img src=x>` @octocat"
)
API_KEY = "sk-test-key-0123456789"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "workspace"
    (ws / "qa").mkdir(parents=True)
    (ws / "qa" / "qa.yml").write_text("version: 1\ntests: []\n")
    return ws


def make_result(ws: Path, name: str, status: Status, reason: str = "ok", line: int = 3) -> TestResult:
    """The shared builder's result, of the manifest in the workspace (so that annotations name it relative to it)."""
    return builders.result(name, status, reason, file=str(ws / "qa" / "qa.yml"), line=line, steps=4)


def run_of(ws: Path, tests: list[TestResult], notice: str | None = None) -> RunResult:
    return builders.run_of(
        *tests, manifest=str(ws / "qa" / "qa.yml"), base_url="https://pr-7.preview.example.com", duration_s=12.5, notice=notice
    )


def masked(*values: str) -> Redactor:
    """A run's redactor that knows `values` (as header values: of any length, as a run gathers them)."""
    return Redactor.of_tests({}, headers={f"X-{i}": value for i, value in enumerate(values)})


def report(run: RunResult, env: dict[str, str], secrets: tuple[str, ...] = (API_KEY,), comment: bool = False) -> StepLog:
    """One step: masks, the console's output of the run (hostile text included), then our own commands."""
    stream = io.StringIO()
    reporter = GitHubReporter(env, Path(env["GITHUB_WORKSPACE"]) / "out", masked(*secrets), comment, stream=stream)
    console = ConsoleReporter(stream=stream, width=200)
    reporter.start()
    for test in run.tests:
        console.handle(TestFinished(result=test))
    for r in (console, reporter):
        r.handle(RunFinished(result=run))
    reporter.finish()
    return read_log(stream.getvalue())


def test_escaping_follows_the_workflow_command_rules() -> None:
    assert escape_data("100% done\r\nnext") == "100%25 done%0D%0Anext"
    assert escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"


def test_one_error_per_failing_test_at_its_manifest_line_relative_to_the_workspace(workspace: Path) -> None:
    run = run_of(
        workspace,
        [
            make_result(workspace, "passes", Status.PASSED),
            make_result(workspace, "price, wrong: really", Status.FAILED, "expected $19.99", 12),
            make_result(workspace, "skipped", Status.SKIPPED, "later"),
            make_result(workspace, "crashes", Status.ERRORED, "LLM provider error: HTTP 500", 20),
        ],
    )
    errors = report(run, runner_env(workspace)).named("error")
    assert [(e.properties, e.message) for e in errors] == [
        ({"file": "qa/qa.yml", "line": "12", "title": "price, wrong: really"}, "expected $19.99"),
        ({"file": "qa/qa.yml", "line": "20", "title": "crashes"}, "LLM provider error: HTTP 500"),
    ]


def test_hostile_text_from_the_agent_cannot_issue_commands(workspace: Path) -> None:
    run = run_of(workspace, [make_result(workspace, "hostile\n::error::pwned-title", Status.FAILED, HOSTILE, 9)])
    log = report(run, runner_env(workspace))
    names = [c.name for c in log.commands]
    masks = names.count("add-mask")  # the secret's forms (raw, base64 ...) before anything else
    assert masks and names == ["add-mask"] * masks + ["stop-commands", "error"]
    assert any("::error::pwned" in line for line in log.displayed)  # shown in the log, inert
    assert any(line.strip().startswith("::add-mask::Log in") for line in log.displayed)
    error = log.named("error")[0]
    assert error.message == HOSTILE and error.properties["title"] == "hostile\n::error::pwned-title"


def test_secrets_are_masked_before_anything_else_is_printed(workspace: Path) -> None:
    run = run_of(workspace, [make_result(workspace, "t", Status.FAILED, f"typed {API_KEY} into the page")])
    log = report(run, runner_env(workspace), secrets=(API_KEY, "line one\nline two", "", API_KEY, "a b&c"))
    masks = [c.message for c in log.named("add-mask")]
    raw = [API_KEY, "line one\nline two", "line one", "line two"]
    assert [m for m in masks if m in raw] == raw
    # the forms a page or URL gives a value are masked too: the runner only knows the raw value
    assert {"line+one%0Aline+two", "line one\\nline two", "a+b%26c", "a%20b%26c", "a b&amp;c"} <= set(masks)
    assert base64.b64encode(API_KEY.encode()).decode().rstrip("=")[:-1] in masks  # and its base64
    assert len(masks) == len(set(masks)) and "" not in masks
    assert log.order[: len(masks)] == ["mask"] * len(masks) and "mask" not in log.order[len(masks) :]


def test_error_annotations_stay_within_the_runners_limit_with_a_final_note(workspace: Path) -> None:
    tests = [make_result(workspace, f"t{i}", Status.FAILED if i % 2 else Status.ERRORED, f"reason {i}", i + 3) for i in range(25)]
    log = report(run_of(workspace, [make_result(workspace, "ok", Status.PASSED), *tests]), runner_env(workspace))
    errors, warnings = log.named("error"), log.named("warning")
    assert [e.properties["title"] for e in errors] == [f"t{i}" for i in range(10)]
    assert len(warnings) == 1 and warnings[0].message == "15 more failed or errored test(s) are listed in the job summary."


def test_an_unreachable_preview_is_one_annotation_not_one_per_test(workspace: Path) -> None:
    notice = "preview unreachable: ConnectError for https://pr-7.preview.example.com: refused"
    tests = [make_result(workspace, f"t{i}", Status.ERRORED, notice) for i in range(30)]
    errors = report(run_of(workspace, tests, notice), runner_env(workspace)).named("error")
    assert len(errors) == 1
    assert errors[0].message == f"30 test(s) did not run: {notice}"
    assert errors[0].properties == {"file": "qa/qa.yml", "title": "preview-qa: preview unreachable"}


def test_outputs_use_the_delimiter_form(workspace: Path) -> None:
    env = runner_env(workspace)
    report(
        run_of(
            workspace,
            [
                make_result(workspace, "a", Status.PASSED),
                make_result(workspace, "b", Status.FAILED),
                make_result(workspace, "c", Status.SKIPPED),
            ],
        ),
        env,
    )
    out = Path(env["GITHUB_WORKSPACE"]) / "out"
    assert read_outputs(Path(env["GITHUB_OUTPUT"])) == {
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
        "results-path": str(out / "results.json"),
        "junit-path": str(out / "junit.xml"),
    }


def test_summary_table_and_failure_details_render_hostile_text_inert(workspace: Path) -> None:
    env = runner_env(workspace)
    report(
        run_of(
            workspace,
            [
                make_result(workspace, "Log in | works", Status.PASSED, "Signed in as <b>demo</b>"),
                make_result(workspace, "Pay @octocat", Status.FAILED, "```\n" + HOSTILE, 8),
            ],
        ),
        env,
    )
    summary = Path(env["GITHUB_STEP_SUMMARY"]).read_text(encoding="utf-8")
    assert "### ❌ preview-qa: failed" in summary
    assert "| ✅ | Log in \\| works | Signed in as &lt;b&gt;demo&lt;/b&gt; | 1.2 s | 4 |" in summary
    row = next(line for line in summary.splitlines() if line.startswith("| ❌ | Pay"))
    assert "<img" not in row and "&lt;img src=x&gt;" in row and "`@octocat`" in row  # no mention: a code span
    assert "❌ **Pay `@octocat`** · qa/qa.yml\\:8" in summary  # the failure card's title
    card = rendered(summary.split("#### Failures", 1)[1])
    assert "<img" not in card and "<pre" not in card and "<code>`</code>" not in card  # inert, and no fenced block
    assert "```\nCheckout broke" not in summary and "``` Checkout broke\n" not in visible(card)
    assert "```\u00a0Checkout" not in card and "``` Checkout broke ::error::pwned" in visible(card)  # one line, as text
    assert "[the run's artifacts](https://github.com/acme/shop/actions/runs/4242#artifacts)" in summary


def test_summary_stays_under_one_mebibyte_whatever_the_run_size(workspace: Path) -> None:
    tests = [make_result(workspace, f"test {i} " + "n" * 150, Status.FAILED, "r" * 5000, i) for i in range(3000)]
    text = render_markdown(run_of(workspace, tests), lambda f: f, "https://github.com/run", 1024 * 1024 - 64 * 1024)
    assert len(text.encode()) < 1024 * 1024 - 64 * 1024
    assert "more failure detail(s) are in results.json" in text
    assert text.rstrip().endswith("[the run's artifacts](https://github.com/run#artifacts).")


def test_pr_comment_is_created_then_updated_not_duplicated(workspace: Path, httpserver: HTTPServer) -> None:
    github = FakeGitHub(httpserver)
    github.add_comment("someone else's comment")
    env = runner_env(workspace, github.url)
    report(run_of(workspace, [make_result(workspace, "a", Status.FAILED, "first run")]), env, comment=True)
    report(run_of(workspace, [make_result(workspace, "a", Status.PASSED, "second run")]), env, comment=True)
    ours = [c for c in github.comments if "<!-- preview-qa: qa/qa.yml -->" in c["body"]]
    assert len(github.comments) == 2 and len(ours) == 1
    assert "second run" in ours[0]["body"] and "first run" not in ours[0]["body"]
    assert [m for m, _ in github.calls].count("POST") == 1 and [m for m, _ in github.calls].count("PATCH") == 1
    assert (workspace / "out" / "comment.md").read_text(encoding="utf-8") == ours[0]["body"]


def test_pr_comment_is_found_on_a_later_page(workspace: Path, httpserver: HTTPServer) -> None:
    github = FakeGitHub(httpserver)
    for i in range(130):
        github.add_comment(f"chatter {i}")
    github.add_comment("<!-- preview-qa: qa/qa.yml -->\nold results")
    report(run_of(workspace, [make_result(workspace, "a", Status.PASSED)]), runner_env(workspace, github.url), comment=True)
    assert len(github.comments) == 131 and "old results" not in github.comments[-1]["body"]


def test_a_read_only_token_degrades_to_the_summary_with_a_notice(workspace: Path, httpserver: HTTPServer) -> None:
    github = FakeGitHub(httpserver, deny=403)
    env = runner_env(workspace, github.url)
    log = report(run_of(workspace, [make_result(workspace, "a", Status.FAILED, "bad")]), env, comment=True)
    warning = log.named("warning")[0]
    assert warning.properties["title"] == "preview-qa: no PR comment"
    assert "HTTP 403" in warning.message and "Resource not accessible by integration" in warning.message
    summary = Path(env["GITHUB_STEP_SUMMARY"]).read_text(encoding="utf-8")
    assert "| ❌ | a | bad |" in summary and "could not post its pull request comment (HTTP 403" in summary
    assert github.comments == []


def test_a_deployment_status_event_comments_on_the_commits_open_pr(workspace: Path, httpserver: HTTPServer) -> None:
    github = FakeGitHub(httpserver, commit_pulls=[{"number": 3, "state": "closed"}, {"number": PR, "state": "open"}])
    event = {"deployment_status": {"target_url": "https://x.vercel.app"}, "deployment": {"sha": "a" * 40}}
    run = run_of(workspace, [make_result(workspace, "a", Status.PASSED)])
    report(run, runner_env(workspace, github.url, event), comment=True)
    assert len(github.comments) == 1 and ("POST", f"/repos/acme/shop/issues/{PR}/comments") in github.calls


def test_no_api_call_without_a_pull_request_or_when_turned_off(workspace: Path, httpserver: HTTPServer) -> None:
    github = FakeGitHub(httpserver)
    run = run_of(workspace, [make_result(workspace, "a", Status.PASSED)])
    report(run, runner_env(workspace, github.url, {"ref": "refs/heads/main"}), comment=True)
    report(run, runner_env(workspace, github.url), comment=False)
    assert github.calls == []
    assert (workspace / "out" / "comment.md").read_text(encoding="utf-8").startswith("<!-- preview-qa: qa/qa.yml -->\n")


def test_action_inputs_reach_the_run_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    manifest = tmp_path / "qa.yml"
    manifest.write_text("version: 1\ntests:\n  - {name: a, task: do it}\n")
    seen: list[RunConfig] = []
    monkeypatch.setattr(cli.run, "execute", lambda spec, config, verbose, plan=None, explore=None: seen.append(config))
    env = {
        "INPUT_MANIFEST": str(manifest),
        "INPUT_BASE-URL": "https://pr-7.example.com/",
        "INPUT_FAIL-ON": "errored",
        "INPUT_COMMENT": "false",
        "INPUT_EXTRA-HEADERS": "x-vercel-protection-bypass: abc:def\r\n\nX-Other:  2\n",
    }
    result = CliRunner().invoke(cli.main, ["run"], env=env)
    assert result.exit_code == 0, result.output
    assert seen[0].extra_headers == {"x-vercel-protection-bypass": "abc:def", "X-Other": "2"}
    assert (str(seen[0].fail_on), seen[0].comment, seen[0].base_url) == ("errored", False, "https://pr-7.example.com")
    bad = CliRunner().invoke(cli.main, ["run"], env={**env, "INPUT_EXTRA-HEADERS": "no colon here"})
    assert bad.exit_code == 2 and "--extra-header must look like 'Name: value' (got 'no colon here')" in bad.output


@pytest.mark.parametrize(
    ("statuses", "fail_on", "code"),
    [
        ([Status.PASSED, Status.SKIPPED], "failed", 0),
        ([Status.FAILED], "failed", 1),
        ([Status.ERRORED], "failed", 1),
        ([Status.FAILED], "errored", 0),
        ([Status.FAILED, Status.ERRORED], "errored", 1),
        ([Status.ERRORED], "never", 0),
    ],
)
def test_fail_on_sets_the_exit_code(workspace: Path, statuses: list[Status], fail_on: str, code: int) -> None:
    run = run_of(workspace, [make_result(workspace, f"t{i}", s) for i, s in enumerate(statuses)])
    assert exit_code(RunEnded(run, FailOn(fail_on).fails)) == code
    cancelled = run.model_copy(update={"stop_reason": StopReason.CANCELLED})
    assert exit_code(RunEnded(cancelled, FailOn.NEVER.fails)) == 130


def test_a_failures_card_lists_its_steps_in_words_with_each_actions_element(workspace: Path) -> None:
    env = runner_env(workspace)
    out = Path(env["GITHUB_WORKSPACE"]) / "out"
    failing = make_result(workspace, "login", Status.FAILED, "agent: the dashboard is empty")
    run = run_of(workspace, [failing])
    step = StepRecorded(
        name="login",
        number=1,
        goal="sign in",
        url="https://pr-7.preview.example.com/dashboard",
        error=None,
        screenshot_png=None,
        actions=[{"click": {"index": 7}}],
        elements=[{"index": 7, "role": "button", "name": "Sign in", "tag": "button"}],
    )
    dropped = Observed(
        name="login",
        kind="actions_dropped",
        error=False,
        detail={"step": 1, "why": "over the limit", "actions": [{"scroll": {"down": True}}], "elements": [None]},
    )
    reporter = GitHubReporter(env, out, Redactor({}), comment=False, stream=io.StringIO())
    dispatch = Dispatcher([ArtifactsReporter(out), reporter])
    for event in (
        RunStarted(manifest=run.manifest, base_url=run.base_url, test_names=["login"]),
        step,
        dropped,
        TestFinished(result=failing),
        RunFinished(result=run),
    ):
        dispatch(event)
    reporter.finish()
    assert not dispatch.broken
    summary = Path(env["GITHUB_STEP_SUMMARY"]).read_text(encoding="utf-8")
    steps = visible(rendered(summary.split("Steps:", 1)[1]))
    assert steps.lstrip().startswith("❌ Clicked button 'Sign in' → /dashboardScrolled down (not run: over the limit)")
    comment = (out / "comment.md").read_text(encoding="utf-8")
    assert "1. ❌ **Clicked button 'Sign in'** → /dashboard<br>Scrolled down (not run\\: over the limit)" in comment
    assert "index" not in summary + comment and "{" not in summary + comment  # no element index, no action JSON


PHISHING = [
    "http://evil.example/login",
    "https://evil.example/pay",
    "www.evil.example/x",
    "WWW.Evil.example",
    "<http://evil.example/angle>",
    "ftp://evil.example/f",
    "mailto:help@evil.example",
    "xmpp:bot@evil.example",
    "support@evil.example",
]


def test_links_in_page_or_agent_text_are_not_clickable_in_the_summary_or_the_comment(workspace: Path) -> None:
    text = "Go to " + " or ".join(PHISHING)
    failing = make_result(workspace, f"Log in at {PHISHING[0]}", Status.FAILED, text, 8)
    failing = failing.model_copy(update={"final_url": "https://evil.example/final", "causes": [text]})
    env = runner_env(workspace)
    report(
        run_of(
            workspace,
            [make_result(workspace, "ok " + PHISHING[2], Status.PASSED, text), failing],
            notice=f"preview unreachable: see {PHISHING[1]}",
        ),
        env,
    )
    summary = rendered(Path(env["GITHUB_STEP_SUMMARY"]).read_text(encoding="utf-8"))
    comment = rendered((workspace / "out" / "comment.md").read_text(encoding="utf-8"))
    for page in (summary, comment):
        links = re.findall(r"<a [^>]*href=\"([^\"]*)\"", page)
        assert links == ["https://github.com/acme/shop/actions/runs/4242#artifacts"], links
        shown = visible(page)
        assert "http://evil.example/login" in shown and "www.evil.example/x" in shown  # still readable, as text


def test_control_characters_never_reach_the_summary_the_comment_or_annotations(workspace: Path) -> None:
    hostile = "bad\x00nul \x1b[31mred\x1b[0m \x07bell \x7fdel \x9bcsi"
    env = runner_env(workspace)
    log = report(run_of(workspace, [make_result(workspace, f"t {hostile}", Status.FAILED, hostile)]), env)
    summary = Path(env["GITHUB_STEP_SUMMARY"]).read_text(encoding="utf-8")
    comment = (workspace / "out" / "comment.md").read_text(encoding="utf-8")
    error = log.named("error")[0]
    for text in (summary, comment, error.message, error.properties["title"]):
        assert not re.search("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]", text), repr(text)
    assert "bad\ufffdnul \ufffd\\[31mred" in summary and error.message.startswith("bad\ufffdnul")


def test_a_long_annotation_is_clipped_where_the_runner_would_cut_it_with_a_visible_ellipsis(workspace: Path) -> None:
    reason = "The page said: " + "very long " * 1000
    log = report(run_of(workspace, [make_result(workspace, "long", Status.FAILED, reason)]), runner_env(workspace))
    error = log.named("error")[0]
    assert len(error.message) == 4096  # the runner keeps 4096 characters
    assert error.message.endswith("…") and reason.startswith(error.message[:-1])


def test_empty_annotation_properties_are_left_out_as_actions_core_does(workspace: Path) -> None:
    test = TestResult(name="no file", file="", line=0, status=Status.ERRORED, reason="crashed", duration_s=1, steps=0)
    error = report(run_of(workspace, [test]), runner_env(workspace)).named("error")[0]
    assert error.properties == {"title": "no file"}


def test_a_comment_with_forty_failures_stays_under_githubs_limit_and_says_how_many_are_folded(workspace: Path) -> None:
    checks = [
        ExpectationOutcome(
            check="text",
            expected="visible text 'Payment confirmed' " + "x" * 200,
            found="no visible line resembles it " + "y" * 200,
            ok=False,
            timeout_s=5,
            waited_s=5,
        )
    ]
    words = [
        StepInWords(number=n, actions=[f"Clicked button 'Step {n}' " + "z" * 200], page=f"https://p/{n}") for n in range(1, 31)
    ]
    tests = [
        make_result(workspace, f"checkout {i}", Status.FAILED, "agent: " + "nothing happened " * 30, i).model_copy(
            update={"expectations": checks, "steps_in_words": words}
        )
        for i in range(40)
    ]
    env = runner_env(workspace)
    report(run_of(workspace, tests), env)
    comment = (workspace / "out" / "comment.md").read_text(encoding="utf-8")
    assert len(comment) < 65_536
    page = rendered(comment, raw_html=True)
    folded = page.split("<details>", 1)[1]
    assert "<summary>37 more failure(s), folded</summary>" in folded  # three cards open, the rest under one fold
    assert page.count("<details>") == 1 and folded.count("</details>") == 1  # closed, even where the size cut falls
    assert folded.index("Cut here") < folded.index("</details>")
    shown = visible(page)
    assert re.search(r"Cut here to stay within GitHub's size limit: 0 more test row\(s\) and \d+ more failure", shown)
    assert shown.count("checkout 0") == 2 and "Payment confirmed" in shown  # its table row and its card


def _drifted(ws: Path, name: str, status: Status, drift: str, healed: bool) -> TestResult:
    return make_result(ws, name, status).model_copy(update={"replay_drift": drift, "healed": healed})


def test_replays_that_drifted_are_listed_inert_with_the_step_and_what_changed(workspace: Path) -> None:
    drift = "replay drifted at step 2: click button 'Add <b>todo</b>' @octocat: element not found"
    run = run_of(
        workspace,
        [
            _drifted(workspace, "add a todo", Status.PASSED, drift, healed=True),
            _drifted(workspace, "log in", Status.FAILED, "replay drifted at step 1: the page went elsewhere", healed=False),
            make_result(workspace, "held", Status.PASSED),
        ],
    )
    text = render_markdown(run, lambda f: f, None, 60_000)
    section = text.split("#### Replays that drifted (the agent took over)\n", 1)[1].split("\nScreenshots,", 1)[0]
    assert section.strip().splitlines() == [  # the failed test's drift is told by its own card
        "- add a todo: replay drifted at step 2\\: click button 'Add &lt;b&gt;todo&lt;/b&gt;' `@octocat`\\: element not "
        f"found (the recorded and the live page: {folder_of('add a todo')}/replay-drift-recorded.png, replay-drift-live.png)"
    ]
    shown = visible(rendered(section))
    assert "<b>" not in rendered(section) and "click button 'Add <b>todo</b>'" in shown and "element not found" in shown


def test_the_pr_comment_counts_and_names_the_healed_tests(workspace: Path, httpserver: HTTPServer) -> None:
    github = FakeGitHub(httpserver)
    drift = "replay drifted at step 2: click button 'Add': element not found"
    run = run_of(
        workspace,
        [_drifted(workspace, "add a todo", Status.PASSED, drift, healed=True), make_result(workspace, "b", Status.PASSED)],
    )
    report(run, runner_env(workspace, github.url), comment=True)
    [comment] = github.comments
    assert "**2 passed · 1 healed (replay drifted, the agent passed)** of 2 test(s)" in comment["body"]
    assert "🩹 **Healed: 1**: add a todo (the replay drifted and the agent passed instead;" in comment["body"]
    assert "| ✅ | add a todo · _healed\\: the replay drifted, the agent passed_ |" in comment["body"]


def test_failed_and_errored_tests_come_first_and_the_green_ones_are_folded(workspace: Path) -> None:
    env = runner_env(workspace)
    names = [("p1", Status.PASSED), ("f1", Status.FAILED), ("s1", Status.SKIPPED), ("e1", Status.ERRORED), ("p2", Status.PASSED)]
    report(run_of(workspace, [make_result(workspace, name, status) for name, status in names]), env)
    page = rendered(Path(env["GITHUB_STEP_SUMMARY"]).read_text(encoding="utf-8"), raw_html=True)
    shown, folded = page.split("<details>", 1)
    cells = re.findall(r"<td>([a-z]\d)</td>", shown)
    assert cells == ["e1", "f1"]  # the worst first, as in report.html
    fold = folded.split("</details>", 1)[0]
    assert fold.startswith("<summary>✅ 2 passed, ⏭️ 1 skipped</summary>") and "<table>" in fold
    assert re.findall(r"<td>([a-z]\d)</td>", fold) == ["p1", "p2", "s1"]


def test_a_cut_inside_the_folded_rows_closes_the_fold(workspace: Path) -> None:
    green = [make_result(workspace, f"ok {i}", Status.PASSED) for i in range(200)]
    tests = [make_result(workspace, "broken", Status.FAILED), *green]
    text = render_markdown(run_of(workspace, tests), str, None, 8_000)
    assert "more test row(s)" in text and text.count("<details>") == text.count("</details>") == 1


def test_an_address_copies_as_it_is_and_links_to_no_one(workspace: Path) -> None:
    env = runner_env(workspace)
    reason = "agent: signed up as ann.lee+qa@example.com; @octocat was told"
    report(run_of(workspace, [make_result(workspace, "sign up", Status.FAILED, reason)]), env)
    summary = Path(env["GITHUB_STEP_SUMMARY"]).read_text(encoding="utf-8")
    assert not re.search("[\u200b-\u200d\u2060\ufeff]", summary)  # no zero-width character to break a copy
    page = rendered(summary, raw_html=True)
    assert "<code>ann.lee+qa@example.com</code>" in page and "<code>@octocat</code>" in page and "mailto:" not in page
    assert "signed up as ann.lee+qa@example.com; @octocat was told" in visible(page)


def test_a_failures_file_and_line_link_to_that_line_at_the_pull_requests_head(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    checkout = workspace / "shop"  # actions/checkout with `path: shop`
    (checkout / ".git").mkdir(parents=True)
    (checkout / "qa").mkdir()
    manifest = checkout / "qa" / "qa.yml"
    manifest.write_text("version: 1\ntests: []\n")
    failing = builders.result("pay", Status.FAILED, "no total", file=str(manifest), line=50)
    run = builders.run_of(failing, manifest=str(manifest))
    head = {"number": PR, "pull_request": {"number": PR, "head": {"sha": "b" * 40}}}
    url = f"https://github.com/acme/shop/blob/{'b' * 40}/qa/qa.yml#L50"
    for event, sha in ((head, "b"), ({"number": PR, "pull_request": {"number": PR}}, "a")):
        env = {**runner_env(workspace, event=event), "GITHUB_SHA": "a" * 40}
        Path(env["GITHUB_STEP_SUMMARY"]).write_text("")  # a fresh one for each step
        report(run, env)
        comment = (workspace / "out" / "comment.md").read_text(encoding="utf-8")
        for text in (Path(env["GITHUB_STEP_SUMMARY"]).read_text(encoding="utf-8"), comment):
            assert f'<a href="{url.replace("b" * 40, sha * 40)}">shop/qa/qa.yml:50</a>' in rendered(text)
    elsewhere = builders.result("pay", Status.FAILED, "no total", file=str(tmp_path / "qa.yml"), line=50)
    Path(env["GITHUB_STEP_SUMMARY"]).write_text("")
    report(builders.run_of(elsewhere, manifest=str(tmp_path / "qa.yml")), env)
    assert "/blob/" not in Path(env["GITHUB_STEP_SUMMARY"]).read_text(encoding="utf-8")  # outside the checkout: no link
