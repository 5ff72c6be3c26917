"""The verdict's rules on what the app's own requests told (verdict/checks/requests.py, verdict/decide.py): a server error
after an action fails the test unless it was retried or allowed; a start page that asked for credentials makes a test
that did not pass errored (blocked by host protection); a blocked navigation is named with its host and action."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from preview_qa.agent.evidence.evidence import action_label
from preview_qa.errors import ManifestError
from preview_qa.manifest.loader import load
from preview_qa.results import Execution, ExpectationOutcome, Status
from preview_qa.verdict.agent_run import AgentRun, BlockedNavigation, DoneReport, SecretAttempt, ServerError
from preview_qa.verdict.decide import decide
from tests.builders import PASS, spec

SAVE_500 = ServerError("POST", "/api/save2", 500, "'Save'")
HELD = ExpectationOutcome(check="text", expected="visible text 'Changes saved'", found="it is visible", ok=True)
FAILED = ExpectationOutcome(check="text", expected="visible text 'Welcome'", found="'about:blank' (titled '')", ok=False)
DENIED = 'the server answered HTTP 401 to http://x/ (WWW-Authenticate: Basic realm="Preview deployment")'
HOST_PROTECTION = (
    "blocked: the preview answered with its host's login page: give the protection-bypass header with `extra-headers` "
    "(or `http-credentials` for basic auth)"
)


def report(status: str, reason: str) -> DoneReport:
    return DoneReport(text=json.dumps({"status": status, "reason": reason}), success=status == "pass")


def test_a_server_error_after_an_action_fails_a_pass_naming_the_request_and_the_action() -> None:
    verdict = decide(spec(), AgentRun(done=PASS, expectations=[HELD], server_errors=[SAVE_500])).verdict
    assert verdict.status is Status.FAILED
    assert verdict.reason == "POST /api/save2 answered 500 after 'Save'"
    assert verdict.causes[0] == "the agent said pass: fine"


def test_a_request_that_succeeded_later_does_not_count() -> None:
    retried = ServerError("POST", "/api/save2", 500, "'Save'", succeeded_later=True)
    assert decide(spec(), AgentRun(done=PASS, server_errors=[retried])).verdict.status is Status.PASSED


@pytest.mark.parametrize(
    ("globs", "status"),
    [
        (["/api/save*"], Status.PASSED),
        (["*/save2"], Status.PASSED),
        (["/api/save2"], Status.PASSED),
        (["/api/metrics*"], Status.FAILED),
        (["/api/save"], Status.FAILED),  # a glob matches the whole path
    ],
)
def test_allowed_paths_are_globs_on_the_whole_path(globs: list[str], status: Status) -> None:
    verdict = decide(spec(allow_server_errors=globs), AgentRun(done=PASS, server_errors=[SAVE_500])).verdict
    assert verdict.status is status


def test_a_glob_spans_slashes() -> None:
    metrics = ServerError("GET", "/api/metrics/cpu/today", 503, "'Open dashboard'")
    run = AgentRun(done=PASS, server_errors=[metrics])
    assert decide(spec(allow_server_errors=["/api/metrics*"]), run).verdict.status is Status.PASSED


def test_the_same_request_failing_again_is_one_cause_that_says_how_often() -> None:
    again = [SAVE_500, SAVE_500, ServerError("GET", "/api/list", 502, "'Save'"), SAVE_500]
    verdict = decide(spec(), AgentRun(done=PASS, server_errors=again)).verdict
    assert verdict.reason == "POST /api/save2 answered 500 (3 times) after 'Save'"
    assert verdict.causes[0] == "GET /api/list answered 502 after 'Save'"


def test_a_server_error_is_a_cause_of_the_agents_own_fail_and_fails_a_blocked_report() -> None:
    failed = decide(spec(), AgentRun(done=report("fail", "nothing saved"), server_errors=[SAVE_500])).verdict
    assert failed.status is Status.FAILED and failed.reason == "agent: nothing saved"
    assert failed.causes == ["POST /api/save2 answered 500 after 'Save'"]
    blocked = DoneReport(json.dumps({"status": "blocked", "reason": "a captcha", "blocked_by": "captcha"}), False)
    verdict = decide(spec(), AgentRun(done=blocked, server_errors=[SAVE_500])).verdict
    assert verdict.status is Status.FAILED and verdict.reason == "POST /api/save2 answered 500 after 'Save'"


def test_a_replay_whose_checks_hold_fails_on_a_server_error() -> None:
    run = AgentRun(execution=Execution.REPLAYED, expectations=[HELD], server_errors=[SAVE_500])
    verdict = decide(spec(expect={"text": "Changes saved"}), run).verdict
    assert verdict.status is Status.FAILED and verdict.reason == "POST /api/save2 answered 500 after 'Save'"
    run.server_errors = []
    assert decide(spec(expect={"text": "Changes saved"}), run).verdict.status is Status.PASSED


def test_a_failed_check_stays_the_reason_with_the_server_error_among_the_causes() -> None:
    verdict = decide(spec(expect={"text": "Welcome"}), AgentRun(done=PASS, expectations=[FAILED], server_errors=[SAVE_500]))
    assert verdict.verdict.reason.startswith("expectation text failed")
    assert verdict.verdict.causes[:2] == ["POST /api/save2 answered 500 after 'Save'", "the agent said pass: fine"]


def test_a_protected_start_page_makes_a_failure_a_block_whatever_the_agent_said() -> None:
    run = AgentRun(done=report("fail", "the page only says 401 Unauthorized"), access_denied=[DENIED], protected_start=True)
    verdict = decide(spec(), run).verdict
    assert verdict.status is Status.ERRORED
    assert verdict.reason == HOST_PROTECTION
    assert verdict.causes == ["agent: the page only says 401 Unauthorized", DENIED]


def test_a_check_failed_on_a_protected_start_page_is_a_block_too() -> None:
    run = AgentRun(done=PASS, expectations=[FAILED], access_denied=[DENIED], protected_start=True)
    verdict = decide(spec(expect={"text": "Welcome"}), run).verdict
    assert verdict.status is Status.ERRORED and verdict.reason == HOST_PROTECTION
    assert verdict.causes[0].startswith("expectation text failed") and DENIED in verdict.causes


def test_a_reached_preview_keeps_its_failed_check_failed() -> None:
    run = AgentRun(done=PASS, expectations=[FAILED], access_denied=[DENIED], protected_start=False)
    assert decide(spec(expect={"text": "Welcome"}), run).verdict.status is Status.FAILED


def test_a_protected_start_page_neither_hides_a_pass_nor_a_secret_carried_off() -> None:
    assert decide(spec(), AgentRun(done=PASS, protected_start=True)).verdict.status is Status.PASSED
    stolen = AgentRun(done=PASS, protected_start=True, secret_attempts=[SecretAttempt("pw", "evil.test")])
    assert decide(spec(), stolen).verdict.status is Status.FAILED


def test_a_failure_after_a_blocked_navigation_names_the_host_and_the_action() -> None:
    run = AgentRun(
        done=PASS,
        expectations=[FAILED],
        navigations_blocked=[BlockedNavigation("example.invalid", "'Leave site'"), BlockedNavigation("example.invalid", None)],
    )
    verdict = decide(spec(expect={"text": "Welcome"}), run).verdict
    assert verdict.status is Status.FAILED
    blocked = (
        "a navigation to example.invalid after 'Leave site' was blocked: example.invalid is not one of the test's "
        "allowed hosts (add it to `allowed_domains` if the test should go there)"
    )
    assert verdict.causes == ["the agent said pass: fine", blocked]


def test_a_block_before_any_action_names_the_host_alone() -> None:
    verdict = decide(spec(), AgentRun(done=report("fail", "blank"), navigations_blocked=[BlockedNavigation("sso.host", None)]))
    assert verdict.verdict.causes[0].startswith("a navigation to sso.host was blocked: ")


@pytest.mark.parametrize(
    ("action", "element", "label"),
    [
        ({"click": {"index": 4}}, {"index": 4, "role": "button", "name": "Save  changes", "tag": "button"}, "'Save changes'"),
        ({"send_keys": {"keys": "Enter"}}, None, "the send keys action"),
        ({"click": {"index": 4}}, {"index": 4, "role": "button", "name": "", "tag": "button"}, "the click action"),
        ({"wait": {"seconds": 1}}, None, None),
        ({"extract": {"query": "price"}}, None, None),
        ({"done": {"success": True}}, None, None),
    ],
)
def test_an_action_is_named_by_its_element_and_reads_and_waits_name_nothing(
    action: dict[str, object], element: dict[str, object] | None, label: str | None
) -> None:
    assert action_label(action, element) == label


def test_allow_server_errors_is_a_list_of_paths(tmp_path: Path) -> None:
    manifest = tmp_path / "qa.yml"
    manifest.write_text(
        "version: 1\ndefaults: {allow_server_errors: [/api/metrics*]}\ntests:\n  - {name: a, task: t}\n"
        "  - {name: b, task: t, allow_server_errors: ['*/health']}\n",
        encoding="utf-8",
    )
    a, b = load(manifest).tests
    assert a.allow_server_errors == ["/api/metrics*"] and b.allow_server_errors == ["*/health"]
    manifest.write_text("version: 1\ntests:\n  - {name: a, task: t, allow_server_errors: [api/metrics]}\n", encoding="utf-8")
    with pytest.raises(ManifestError) as raised:
        load(manifest)
    assert "'api/metrics' is matched against a request's path: start it with '/' (or '*')" in str(raised.value)
    assert ":3:" in str(raised.value)
