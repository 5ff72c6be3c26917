"""`run --explore` and `explore`: the findings as GitHub renders them (cmark-gfm) in findings.md, the job summary and
the PR comment: page text inert, a long list cut with a note of what is left out (never silently), the job summary
shortened past GitHub's limit while findings.md stays whole; `--fail-on findings`, which fails a run on a new confirmed
finding or a page not compared; and the flags it needs, refused with a usage error before anything runs."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from preview_qa import app
from preview_qa.config import FailOn, FailRules, RunConfig
from preview_qa.events import ExploreFinished, RunFinished
from preview_qa.manifest import loader
from preview_qa.reporters import explore as outputs
from preview_qa.reporters.github.explore_section import explore_markdown
from preview_qa.reporters.github.reporter import COMMENT_FILE, COMMENT_LIMIT, SUMMARY_LIMIT, GitHubReporter
from preview_qa.reporters.html import HtmlReporter
from preview_qa.results import ExploreResult, Finding, FindingKind, StopReason, Usage
from preview_qa.secrets.redact import Redactor
from preview_qa.secrets.safe_stderr import SafeStderr, install_safe_stderr
from tests.builders import result, run_of
from tests.conftest import run_in_process
from tests.fakes.github import read_log, rendered, runner_env, visible

HOSTILE = "@someone <img src=x> [click](http://evil) ](http://evil) ::error::pwned\n::error::pwned www.evil.example ```"


def found(summary: str = "GET /api/cart answered 500", page: str = "/cart", **kw: object) -> Finding:
    fields = {"on_baseline": False, "confirmed": True, "reason": "its repro fails on the preview and passes on the baseline"}
    test = {"name": f"{page} has no failed request", "steps": [{"open": page}], "expect": {"requests": {"failed": "none"}}}
    fields |= {"evidence": {"message": summary, "screenshot": "sweep-preview/tests/x/final.png"}, "repro": test}
    return Finding(kind=FindingKind.HTTP_ERROR, url=page, summary=summary, **{**fields, **kw})


def explored(*findings: Finding, **kw: object) -> ExploreResult:
    return ExploreResult(base_url="http://pr", baseline_url="http://main", started_at="now", findings=list(findings), **kw)


def test_a_hostile_finding_renders_no_link_mention_or_html() -> None:
    hostile = found(HOSTILE, f"/x/{HOSTILE}", reason=HOSTILE)
    result = explored(
        hostile,
        hostile.model_copy(update={"on_baseline": True, "confirmed": False}),
        hostile.model_copy(update={"confirmed": False}),
        uncompared={f"/y/{HOSTILE}": HOSTILE},
        notes=[HOSTILE],
    )
    page = rendered(explore_markdown(result), raw_html=True)
    assert "<a " not in page and "<img" not in page and 'class="user-mention"' not in page
    assert page.count("<details>") == 3 and page.count("<pre") == 1  # the repro, the two folds; nothing opened by text
    assert "::error::pwned" in visible(page)  # shown as text: the reader sees what the page said
    assert "This PR breaks 1 thing</h2>" in page and "Also on main (1)" in page and "Unconfirmed (1)" in page
    # the console's lines of it (`run --explore`, `explore`): one line each, no workflow command among them
    assert not read_log("\n".join(outputs.told(result, Path("out/findings.md")))).commands


def test_a_long_list_is_cut_with_a_note_of_how_many_are_left_out() -> None:
    result = explored(*(found(f"GET /api/{n} answered 500 " + "x" * 200, f"/p{n}") for n in range(400)))
    text = explore_markdown(result, 20_000, "####", "results/explore/findings.md")
    assert len(text.encode()) <= 20_000
    shown = text.count("<summary>repro</summary>")
    assert 0 < shown < 400
    assert f"{400 - shown} more finding(s) in the artifacts (results/explore/findings.md)" in visible(rendered(text))
    assert explore_markdown(result).count("<summary>repro</summary>") == 400  # findings.md has every one


def test_the_section_says_what_the_charters_cost() -> None:
    spent = Usage(llm_calls=7, total_tokens=9000, cost_usd=0.0123)
    assert "in 0 s, 7 LLM call(s), $0.0123." in explore_markdown(explored(usage=spent))
    assert "in 0 s." in explore_markdown(explored())  # sweeps alone: no LLM call to tell


def test_a_cut_inside_a_fold_closes_it() -> None:
    text = explore_markdown(explored(*(found(f"error {n} " + "y" * 250, on_baseline=True) for n in range(200))), 10_000)
    assert text.count("<details>") == text.count("</details>") == 1 and "more finding(s) in the artifacts" in text


def test_a_job_summary_past_githubs_limit_is_shortened_and_says_where_findings_md_is(tmp_path: Path) -> None:
    result = explored(*(found(f"GET /api/{n} answered 500 " + "z" * 280, f"/page/{n}") for n in range(1800)))
    summary = tmp_path / "summary.md"
    outputs.write(result, tmp_path / "out", {"GITHUB_STEP_SUMMARY": str(summary)})
    whole = (tmp_path / "out" / "findings.md").read_text(encoding="utf-8")
    assert len(whole.encode()) > SUMMARY_LIMIT and whole.count("<summary>repro</summary>") == 1800
    text = summary.read_text(encoding="utf-8")
    assert len(text.encode()) <= SUMMARY_LIMIT and f"in the artifacts ({tmp_path / 'out' / 'findings.md'})" in text.replace(
        "\\", ""
    )


def test_run_explore_s_findings_reach_the_pr_comment_within_its_limit(tmp_path: Path) -> None:
    findings = explored(*(found(f"GET /api/{n} answered 500 " + "w" * 250, f"/p{n}") for n in range(300)))
    reporter = GitHubReporter({"GITHUB_ACTIONS": "true"}, tmp_path, Redactor({}), comment=False, stream=io.StringIO())
    reporter.start()
    reporter.handle(RunFinished(result=run_of(result("home"))))
    reporter.handle(ExploreFinished(explore=findings))
    reporter.finish()
    body = (tmp_path / COMMENT_FILE).read_text(encoding="utf-8")
    assert "#### This PR breaks 300 things" in body and len(body) <= COMMENT_LIMIT
    assert "more finding(s) in the artifacts" in body and "explore/findings.md" in body


def test_fail_on_findings_fails_on_a_new_confirmed_finding_or_a_page_not_compared_only() -> None:
    rule = FailRules.parse("findings")
    assert rule.fails(run_of(result("home"), explore=explored(found())))
    assert rule.fails(run_of(result("home"), explore=explored(uncompared={"/docs": "its sweep on the baseline errored"})))
    unconfirmed, on_main = found(confirmed=False), found(on_baseline=True, confirmed=False)
    assert not rule.fails(run_of(result("home"), explore=explored(unconfirmed, on_main)))
    assert not FailRules().fails(run_of(result("home"), explore=explored(found())))  # only with the word
    assert FailOn.FINDINGS.fails(run_of(result("home"), explore=explored(found())))


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--explore"], "--explore needs --baseline-url (the deployment to compare with)"),
        (["--fail-on", "findings"], "--fail-on findings needs --explore"),
        (["--fail-on", "regressions,findings", "--baseline-url", "http://127.0.0.1:8"], "--fail-on findings needs --explore"),
        (["--explore", "--baseline-url", "http://127.0.0.1:8", "--shard", "1/2"], "--explore with --shard would explore once"),
        # the changed page's charter needs the LLM: said before the tests run, not after them (no key in the environment)
        (
            ["--explore", "--baseline-url", "http://127.0.0.1:8", "--changed-files", "changed.txt"],
            "--explore: the changed pages' agent charters need the LLM",
        ),
    ],
)
def test_explore_s_flags_are_refused_without_what_they_need(tmp_path: Path, flags: list[str], said: str) -> None:
    routes = "routes:\n  src/help/**: [/help]\n"
    (tmp_path / "qa.yml").write_text(f"version: 1\n{routes}tests:\n  - name: home\n    steps: [{{open: /}}]\n", encoding="utf-8")
    (tmp_path / "changed.txt").write_text("src/help/page.tsx\n", encoding="utf-8")
    done = run_in_process(["run", "qa.yml", "--base-url", "http://127.0.0.1:9", *flags], cwd=tmp_path)
    assert done.returncode == 2 and said in done.stderr, done.stderr
    assert not (tmp_path / "preview-qa-results").exists()  # refused before anything ran or was written


def test_explore_s_console_lines_issue_no_workflow_command(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A console message with a line break in it once printed `::error::pwned` on a line of its own."""
    hostile = explored(found(HOSTILE), uncompared={"/y": HOSTILE}, charters={"/z": HOSTILE})
    monkeypatch.setattr("preview_qa.explore.explorer.explore", lambda job, env: hostile)
    args = ["explore", "--base-url", "http://127.0.0.1:9", "--baseline-url", "http://127.0.0.1:8", "--out", str(tmp_path)]
    done = run_in_process([*args, "--max-charters", "0"])
    assert done.returncode == 1 and "breaks: http_error on /cart" in done.stdout, done.stdout + done.stderr
    assert not read_log(done.stdout).commands, done.stdout


def test_in_actions_what_explore_s_own_runs_print_issues_no_workflow_command(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The sweeps' runs print their tables, page text in them; in Actions nothing stopped a line of it from being read
    as a command (the run's own GitHub reporter is not theirs: their environment has no GITHUB_*)."""

    def exploring(job: object, env: object) -> ExploreResult:
        print("::error::pwned by a page", flush=True)  # as a wrapped line of a sweep's table could start
        return explored()

    monkeypatch.setattr("preview_qa.explore.explorer.explore", exploring)
    args = ["explore", "--base-url", "http://127.0.0.1:9", "--baseline-url", "http://127.0.0.1:8", "--out", str(tmp_path)]
    done = run_in_process([*args, "--max-charters", "0"], env=runner_env(tmp_path))
    log = read_log(done.stdout)
    assert "::error::pwned by a page" in log.displayed, done.stdout
    assert [c.name for c in log.commands if c.name != "stop-commands"] == [], log.commands


def test_after_the_exploration_the_run_s_stderr_redacts_the_run_s_secrets_again(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The exploration's own runs each install their redactor, which knows no GITHUB_* variable (their environment has
    none): the run's, which knows the GitHub token, is back before the reporters finish."""
    monkeypatch.setattr(sys, "stderr", sys.stderr)  # put back after the test, whatever the run wrapped it in
    token = "ghs_outerRunToken0123456789abcdef"
    manifest = loader.loads("version: 1\ntests:\n  - name: later\n    skip: not yet\n    steps: [{open: /}]\n", "qa.yml")
    config = RunConfig(manifest=Path("qa.yml"), base_url="http://127.0.0.1:9", out=tmp_path, cache=None)

    def exploration(prepared: app.Prepared, spent: Usage) -> ExploreResult:
        install_safe_stderr(Redactor.of_tests({}))  # as each nested app.execute does
        return explored()

    run = app.execute(manifest, config, {"GITHUB_TOKEN": token}, explore=exploration)
    assert run.explore is not None and isinstance(sys.stderr, SafeStderr)
    assert sys.stderr.redactor.find(f"token {token}") is not None  # the run's redactor knows its token again


def test_report_html_has_the_section_with_page_text_escaped(tmp_path: Path) -> None:
    hostile = found("<script>alert(1)</script>", evidence={"target": "<b>t</b>"}, repro={"name": "<img src=x>", "steps": []})
    page = HtmlReporter(tmp_path).render(run_of(result("home"), explore=explored(hostile)))
    section = page.split('<section id="explore">', 1)[1].split("</section>", 1)[0]
    assert "<h2>This PR breaks 1 thing</h2>" in section and "<summary>repro</summary>" in section
    assert "<script>" not in section and "<b>" not in section and "<img" not in section
    assert "&lt;img src=x&gt;" in section  # the repro's YAML, shown as text


def test_a_cancelled_run_explores_nothing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Ctrl-C during the tests ends the job: the exploration (a minute or more) does not start after them."""
    monkeypatch.setattr(sys, "stderr", sys.stderr)
    cancelled = run_of(result("home"), stop_reason=StopReason.CANCELLED)
    monkeypatch.setattr(app, "run_bounded", lambda job: (job.close(), cancelled)[1])  # as the signal left the run
    manifest = loader.loads("version: 1\ntests:\n  - name: home\n    steps: [{open: /}]\n", "qa.yml")
    config = RunConfig(manifest=Path("qa.yml"), base_url="http://127.0.0.1:9", out=tmp_path, cache=None)
    asked: list[app.Prepared] = []
    run = app.execute(manifest, config, {}, explore=lambda prepared, _spent: (asked.append(prepared), explored())[1])
    assert run.stop_reason is StopReason.CANCELLED and run.explore is None and not asked


def test_the_run_s_charters_get_what_the_tests_left_of_its_budget() -> None:
    """--run-max-cost-usd bounds the exploration after the tests too; before, its charters had no bound at all. A
    budget on a model of unknown price with charters to run is refused before any test starts."""
    from preview_qa.errors import UnpricedBudgetError
    from preview_qa.explore.in_run import RunExploration

    text = "version: 1\nroutes: {'src/cart/**': [/cart]}\ntests:\n  - name: home\n    steps: [{open: /}]\n"
    manifest = loader.loads(text, "qa.yml")
    run = RunConfig(
        manifest=Path("qa.yml"),
        base_url="http://127.0.0.1:9",
        baseline_url="http://127.0.0.1:8",
        changed_files=["src/cart/page.tsx"],
        run_max_cost_usd=0.5,
        price_per_mtok=(1.0, 2.0),
    )
    env = {"OPENAI_API_KEY": "k"}
    assert RunExploration(manifest, run, env).job(Usage(cost_usd=0.2)).max_cost_usd == pytest.approx(0.3)
    with pytest.raises(UnpricedBudgetError, match=r"--run-max-cost-usd \(with --explore's charters\) cannot be enforced"):
        RunExploration(manifest, RunConfig(**{**run.__dict__, "price_per_mtok": None, "model": "unpriced"}), env)
