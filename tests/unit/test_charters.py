"""explore/charters.py without a browser: a charter's report becomes findings with repros of its steps and checks; a
report that is not one leaves its page unexplored with why, and a finding no check could confirm is kept, with why."""

from __future__ import annotations

from typing import Any

from preview_qa.explore.charters import SCHEMA, charter, reported
from preview_qa.results import FindingKind, Status, TestResult


def ran(data: Any, status: Status = Status.PASSED) -> TestResult:
    report = {"status": "pass", "reason": "tried it", **({"data": data} if data is not None else {})}
    return TestResult(name="charter /cart", file="charters.yml", line=1, status=status, reason="r", agent_report=report)


def claim(summary: str, steps: list[str], text: list[str]) -> dict[str, Any]:
    return {"summary": summary, "steps": steps, "expect_text": text, "expect_url": "", "expect_elements": []}


def test_a_charter_is_an_ordinary_test_whose_data_is_its_findings() -> None:
    test = charter("/cart")
    assert test["start"] == "/cart" and "/cart" in test["task"] and test["output_schema"] is SCHEMA


def test_each_reported_finding_becomes_a_repro_of_its_steps_and_checks() -> None:
    said = reported("/cart", ran({"findings": [claim("  the total\nis wrong ", ["Add the anvil", " "], ["Total: $19.99"])]}))
    assert not isinstance(said, str)
    ((seen, unfit),) = said
    assert unfit is None and seen.kind is FindingKind.AGENT and seen.summary == "the total is wrong"
    assert seen.repro == {
        "name": "/cart: the total is wrong",
        "steps": [{"open": "/cart"}, {"do": "Add the anvil"}],
        "expect": {"text": ["Total: $19.99"]},
    }
    assert seen.checks == {"text"}


def test_a_finding_no_check_could_confirm_is_kept_with_why() -> None:
    said = reported("/cart", ran({"findings": [claim("it feels slow", ["Open the cart"], [" "])]}))
    assert not isinstance(said, str)
    ((seen, unfit),) = said
    assert unfit is not None and "names no check a working page would pass" in unfit and seen.summary == "it feels slow"


def test_a_charter_with_no_report_leaves_its_page_unexplored_with_why() -> None:
    assert reported("/cart", None) == "its charter did not run"
    why = reported("/cart", ran(None, Status.ERRORED))
    assert isinstance(why, str) and why.startswith("its charter gave no usable report (errored: r;")
    assert "findings" in str(reported("/cart", ran({"findings": "none"})))
