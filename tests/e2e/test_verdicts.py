"""End to end: real Chromium, real browser-use, the scripted LLM over HTTP; one run, many verdicts, checked as a user would."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.conftest import DEMO_PASSWORD, CliRun, scripted_run
from tests.site import DemoSite

pytestmark = pytest.mark.e2e

LOGIN = [
    {"input": {"element": "Email", "text": "demo@acme.test"}},
    {"input": {"element": "Password", "text": "<secret>pw</secret>"}},
    {"click": {"element": "Log in"}},
]

MANIFEST = """
version: 1
defaults: {max_steps: 4, timeout: 120}
tests:
  - name: real pass
    start: /login
    task: "[real-pass] Log in with password <secret>pw</secret> and check the dashboard lists three orders."
    secrets: {pw: DEMO_PASSWORD}
    expect: {url: /dashboard, text: ["Signed in as demo@acme.test", "#1003"]}
  - name: pass whose reason sounds negative
    start: /signup
    task: "[negative-words] Submit the signup form with an invalid email and check it is refused."
    expect: {text: ["Please enter a valid email address"]}
  - name: fail reported in French
    start: /product
    task: "[french] Vérifie que le prix affiché est 9,99 $."
  - name: never calls done
    start: /product
    task: "[no-done] Scroll around forever."
    max_steps: 2
  - name: output is not JSON
    start: /product
    task: "[not-json] Read the price."
  - name: output is never JSON within max_steps
    start: /product
    task: "[not-json] Read the price."
    max_steps: 2
  - name: output breaks the schema
    start: /product
    task: "[bad-schema] Read the price."
  - name: provider answers HTTP 500
    start: /product
    task: "[http-500] Read the price."
    max_steps: 2  # each step's call is tried 3 times with the client's backoff: two show the error, four only wait
  - name: claims pass but expect fails
    start: /login
    task: "[false-pass] Log in with password <secret>pw</secret> and check the dashboard."
    secrets: {pw: DEMO_PASSWORD}
    expect: {url: /dashboard}
  - name: wrong extracted value
    start: /product
    task: "[wrong-value] Read the product's price."
    output_schema: {type: object, properties: {price: {type: string}}, required: [price]}
    expect: {data: {price: "$19.99"}}
  - name: contradictory success flag
    start: /product
    task: "[contradiction] Read the price."
  - name: judge agrees
    start: /product
    task: "[judge-yes] Read the price."
    judge: true
  - name: judge disagrees
    start: /product
    task: "[judge-no] Read the price."
    judge: true
  - name: skipped one
    task: never runs
    skip: not ready yet
"""

SCENARIOS = [
    {"match": "[real-pass]", "turns": [{"actions": LOGIN}, {"done": {"status": "pass", "reason": "Three orders listed."}}]},
    {
        "match": "[negative-words]",
        "turns": [
            {"actions": [{"input": {"element": "Email", "text": "nope"}}, {"click": {"element": "Create account"}}]},
            {"done": {"status": "pass", "reason": "Unable to submit: the address was not found valid, as the test expects."}},
        ],
    },
    {"match": "[french]", "turns": [{"done": {"status": "fail", "reason": "Le prix affiché est 19,99 $, pas 9,99 $."}}]},
    {"match": "[no-done]", "turns": [{"actions": [{"wait": {"seconds": 1}}]}]},
    {"match": "[not-json]", "turns": [{"raw": "I think it passed!"}]},
    {"match": "[bad-schema]", "turns": [{"content": {"action": [{"done": {"data": {"status": "maybe"}}}]}}]},
    {"match": "[http-500]", "turns": [{"http_status": 500}]},
    {
        "match": "[false-pass]",
        "turns": [
            {
                "actions": [
                    {"input": {"element": "Email", "text": "demo@acme.test"}},
                    {"input": {"element": "Password", "text": "wrong-password"}},
                    {"click": {"element": "Log in"}},
                ]
            },
            {"done": {"status": "pass", "reason": "Logged in fine."}},
        ],
    },
    {"match": "[wrong-value]", "turns": [{"done": {"status": "pass", "reason": "Read it.", "data": {"price": "$29.99"}}}]},
    {
        "match": "[judge-yes]",
        "judge": {"verdict": True, "reasoning": "Price shown."},
        "turns": [{"done": {"status": "pass", "reason": "Price is $19.99."}}],
    },
    {
        "match": "[judge-no]",
        "judge": {"verdict": False, "reasoning": "x", "failure_reason": "No price was read."},
        "turns": [{"done": {"status": "pass", "reason": "Price is $19.99."}}],
    },
    {"match": "[contradiction]", "turns": [{"done": {"status": "pass", "reason": "All good."}, "done_success": False}]},
]


@pytest.fixture(scope="module")
def core_run(tmp_path_factory: pytest.TempPathFactory, site: DemoSite) -> Iterator[CliRun]:
    with scripted_run(tmp_path_factory.mktemp("core"), site, MANIFEST, SCENARIOS, "--concurrency", "3") as run:
        yield run


def test_exit_code_is_1_when_any_test_fails(core_run: CliRun) -> None:
    assert core_run.exit_code == 1, core_run.stderr
    assert core_run.results["status"] == "errored"


def test_real_pass(core_run: CliRun) -> None:
    t = core_run.test("real pass")
    assert t["status"] == "passed", t
    assert t["reason"] == "Three orders listed."
    assert [e["ok"] for e in t["expectations"]] == [True, True, True]
    assert t["steps"] == 2
    assert t["agent_report"] == {"status": "pass", "reason": "Three orders listed.", "quotes": [], "addressed": []}


def test_negative_words_in_a_pass_reason_do_not_fail_it(core_run: CliRun) -> None:
    t = core_run.test("pass whose reason sounds negative")
    assert t["status"] == "passed", t
    assert "Unable to submit" in t["reason"]


def test_fail_reported_in_french_fails_with_its_reason(core_run: CliRun) -> None:
    t = core_run.test("fail reported in French")
    assert t["status"] == "failed"
    assert "Le prix affiché est 19,99 $" in t["reason"]


def test_agent_that_never_calls_done_fails(core_run: CliRun) -> None:
    t = core_run.test("never calls done")
    assert t["status"] == "failed"
    assert t["reason"] == "the agent did not finish within max_steps=2"


def test_output_that_is_not_json_fails(core_run: CliRun) -> None:
    t = core_run.test("output is not JSON")
    assert t["status"] == "failed"
    assert "output was invalid" in t["reason"] and "not valid JSON" in t["reason"]


def test_output_never_usable_is_the_headline_when_max_steps_runs_out(core_run: CliRun) -> None:
    # the steps ran out because no answer was usable: the fault is what ended it, as in the test above, not max_steps
    t = core_run.test("output is never JSON within max_steps")
    assert t["status"] == "failed"
    assert t["reason"].startswith("the agent's output was invalid and it never reported a verdict: not valid JSON"), t
    assert "no answer from step 1 on was usable, so max_steps=2 ran out" in t["causes"], t


def test_output_that_breaks_the_schema_fails(core_run: CliRun) -> None:
    t = core_run.test("output breaks the schema")
    assert t["status"] == "failed"
    assert "does not match the expected schema" in t["reason"]


def test_provider_http_500_is_an_error_not_a_failure(core_run: CliRun) -> None:
    t = core_run.test("provider answers HTTP 500")
    assert t["status"] == "errored"
    assert t["reason"].startswith("LLM provider error: HTTP 500")


def test_expectation_overrules_an_agent_that_claims_pass(core_run: CliRun) -> None:
    t = core_run.test("claims pass but expect fails")
    assert t["status"] == "failed"
    assert t["reason"].startswith("expectation url failed: expected URL containing '/dashboard', found ")
    assert "/login" in t["reason"]
    assert t["agent_report"]["status"] == "pass"


def test_wrong_extracted_value_fails_naming_both_values(core_run: CliRun) -> None:
    t = core_run.test("wrong extracted value")
    assert t["status"] == "failed"
    assert t["reason"] == 'expectation data.price failed: expected "$19.99", found "$29.99"'


def test_contradictory_report_fails(core_run: CliRun) -> None:
    t = core_run.test("contradictory success flag")
    assert t["status"] == "failed"
    assert "contradicts itself" in t["reason"]


def test_judge_can_only_take_a_pass_away(core_run: CliRun) -> None:
    assert core_run.test("judge agrees")["status"] == "passed"
    t = core_run.test("judge disagrees")
    assert t["status"] == "failed"
    assert t["reason"] == "the judge disagreed with the agent's pass: No price was read."
    judged = [c for c in core_run.llm.calls if c["kind"] == "judge"]
    assert len(judged) == 2  # browser-use's judge asked the scripted LLM once per judged test, and only then


def test_skipped_test_is_green_and_never_runs(core_run: CliRun) -> None:
    t = core_run.test("skipped one")
    assert t["status"] == "skipped" and t["reason"] == "not ready yet" and t["steps"] == 0
    assert not any("never runs" in str(body) for body in core_run.llm.requests)


def test_junit_matches_results(core_run: CliRun) -> None:
    suite = next(iter(core_run.junit))
    cases = {c.name: c for c in suite}
    assert suite.tests == 14 and suite.failures == 9 and suite.errors == 1 and suite.skipped == 1
    failure = cases["wrong extracted value"].result[0]
    assert failure._tag == "failure" and failure.message.startswith("expectation data.price failed")
    assert cases["provider answers HTTP 500"].result[0]._tag == "error"
    assert cases["real pass"].is_passed and float(cases["real pass"].time) > 0
    assert cases["real pass"]._elem.get("line") == "5"


def test_results_are_in_manifest_order_whatever_finished_first(core_run: CliRun) -> None:
    names = [t["name"] for t in core_run.results["tests"]]
    assert names[0] == "real pass" and names[-1] == "skipped one" and len(names) == 14


def test_secret_reaches_neither_the_llm_nor_any_output(core_run: CliRun) -> None:
    real = core_run.test("real pass")
    assert real["status"] == "passed", real  # the secret was really typed into the page (else: what happened instead)
    assert all(DEMO_PASSWORD not in str(body) for body in core_run.llm.requests)
    assert DEMO_PASSWORD not in core_run.all_output_text()


def test_console_table_lists_every_test(core_run: CliRun) -> None:
    for name in ("real pass", "wrong extracted value", "skipped one"):
        assert name in core_run.stdout
    assert "ERRORED: 1 skipped, 3 passed, 9 failed, 1 errored" in core_run.stdout
