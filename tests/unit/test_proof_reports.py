"""--prove in the reports: the job summary (and PR comment), report.html and the console list the vacuous and weak
tests, each with the mutation it survived and what to add, inert; results.json counts the vacuous ones; `--fail-on
vacuous` fails a run with one, and only then."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console

from preview_qa.config import FailOn
from preview_qa.events import RunFinished
from preview_qa.reporters.artifacts import results_document
from preview_qa.reporters.console import ConsoleReporter
from preview_qa.reporters.github.markdown import render_markdown
from preview_qa.reporters.html import HtmlReporter
from preview_qa.results import MutationOutcome, Proof, ProofVerdict, RunResult, TestResult
from tests.builders import result, run_of

SURVIVED = MutationOutcome(name="POST /api/save answers 500", outcome="passed", reason="the test's checks still held")
CAUGHT = MutationOutcome(name="the expected text 'Acme' is removed from the pages", outcome="failed", reason="gone")


def proved(name: str, verdict: ProofVerdict, reason: str, *mutations: MutationOutcome) -> TestResult:
    return result(name).model_copy(update={"proof": Proof(verdict=verdict, reason=reason, mutations=list(mutations))})


HELD = "visible text 'Acme' was on the page before its first action, and only that failed when POST /api/save answers 500"
RUN = run_of(
    proved("saves [x](https://evil.test)", ProofVerdict.VACUOUS, "passes even when POST /api/save answers 500", SURVIVED),
    proved("footer", ProofVerdict.WEAK, "fails only when the text is removed", SURVIVED, CAUGHT),
    proved("header", ProofVerdict.WEAK, HELD, CAUGHT.model_copy(update={"name": "POST /api/save answers 500"})),
    proved("real", ProofVerdict.PROVEN, "it fails when POST /api/save answers 500"),
    result("unproven"),
)


def test_the_summary_lists_vacuous_then_weak_tests_with_what_they_survived_and_what_to_add() -> None:
    text = render_markdown(RUN, lambda f: f, None, 60_000)
    assert "**Proofs** (each passing test replayed against mutations of the preview): 1 proven, 2 weak, 1 vacuous" in text
    vacuous = next(line for line in text.splitlines() if "is vacuous" in line)
    assert "passes even when POST /api/save answers 500" in vacuous and "add an \\`expect\\` on what the app did" in vacuous
    assert "[x](https" not in text and "saves \\[x\\]" in text  # a test's name is inert
    assert text.index("is vacuous") < text.index("is weak")
    assert f"**header** is weak: {HELD}." in text  # it survived nothing: what held before its first action is said


def test_a_run_without_proofs_says_nothing_of_them() -> None:
    plain = run_of(result("a"))
    assert "Proofs" not in render_markdown(plain, lambda f: f, None, 60_000)
    assert 'id="proofs"' not in HtmlReporter(Path("out")).render(plain)


def test_report_html_and_the_console_show_the_same(tmp_path: Path) -> None:
    page = HtmlReporter(tmp_path).render(RUN)
    assert "<strong>footer</strong> is weak: passes even when POST /api/save answers 500." in page
    assert "<strong>header</strong> is weak: visible text &#39;Acme&#39; was on the page before its first action" in page
    assert "saves [x](https://evil.test)" in page and 'href="https://evil.test' not in page
    out = io.StringIO()
    reporter = ConsoleReporter()
    reporter.console = Console(file=out, width=400)
    reporter.handle(RunFinished(result=RUN))
    said = out.getvalue()
    assert "proofs: 1 proven, 2 weak, 1 vacuous" in said and "vacuous: saves [x](https://evil.test): passes even" in said


def test_results_json_counts_the_vacuous_tests_and_fail_on_vacuous_gates_on_them() -> None:
    assert results_document(RUN)["totals"]["vacuous"] == 1
    assert results_document(RUN)["tests"][0]["proof"]["mutations"][0] == SURVIVED.model_dump()
    assert FailOn.VACUOUS.fails(RUN)
    assert not FailOn.VACUOUS.fails(run_of(*(t for t in RUN.tests if t.name != RUN.tests[0].name)))
    assert not FailOn.FAILED.fails(RUN)
    assert isinstance(RUN, RunResult)


def test_the_summary_lists_ten_flagged_tests_at_most() -> None:
    many = run_of(*(proved(f"t{i}", ProofVerdict.VACUOUS, "passes even when GET /x answers 500", SURVIVED) for i in range(25)))
    text = render_markdown(many, lambda f: f, None, 60_000)
    assert text.count("is vacuous") == 10 and "- and 15 more in results.json" in text
