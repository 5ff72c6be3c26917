"""End to end: what the app's own requests say counts (tests/site/server_errors.py). A save that shows "Changes
saved" at once while its request answers 500 a second later, told only by a toast that hides itself, fails naming the
500 and the action, on the agent's run and on a replay, unless the test allows the path or the app retried and
succeeded; a start page behind basic auth errors as blocked, whatever the agent says; a failure after a navigation
to another host names the host and the action, in the reason's causes and the failure card."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest

from tests.conftest import CliRun, clean_env, scripted_run
from tests.site import DemoSite

pytestmark = pytest.mark.e2e

SAVE = """    task: "[save] Save the profile."
    expect: {text: Changes saved, not_text: "Couldn't save"}
"""
MANIFEST = f"""version: 1
defaults: {{max_steps: 4, timeout: 90}}
tests:
  - name: hidden failure
    start: /errors/toast
{SAVE}  - name: allowed failure
    start: /errors/toast
    allow_server_errors: ["/errors/api/save*"]
{SAVE}  - name: retried
    start: /errors/retry
{SAVE}  - name: basic auth
    start: /errors/basic
    task: "[walled] Check the profile page."
  - name: leaves the site
    start: /external
    task: "[leave] Follow the link to the partner site."
    expect: {{text: Welcome}}
"""
SCENARIOS = [
    {
        "match": "[save]",
        "turns": [
            {"actions": [{"click": {"element": "Save"}}], "goal": "save"},
            {"done": {"status": "pass", "reason": "Changes saved is shown."}},
        ],
    },
    {"match": "[walled]", "turns": [{"done": {"status": "fail", "reason": "The page only says 401 Unauthorized."}}]},
    {
        "match": "[leave]",
        "turns": [
            {"actions": [{"click": {"element": "Leave site"}}], "goal": "follow the link"},
            {"done": {"status": "pass", "reason": "Followed the link."}},
        ],
    },
]
SAVE_500 = "POST /errors/api/save2 answered 500 after 'Save'"
BLOCKED = (
    "a navigation to example.invalid after 'Leave site' was blocked: example.invalid is not one of the test's allowed "
    "hosts (add it to `allowed_domains` if the test should go there)"
)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory, site: DemoSite) -> Iterator[CliRun]:
    with scripted_run(tmp_path_factory.mktemp("server-errors"), site, MANIFEST, SCENARIOS, "--concurrency", "3") as done:
        yield done


def events(run: CliRun, name: str) -> list[dict[str, Any]]:
    path = run.out / str(run.test(name)["artifacts"]["events"])
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_a_server_error_the_page_hides_fails_the_test_naming_the_request_and_the_action(run: CliRun) -> None:
    t = run.test("hidden failure")
    assert t["status"] == "failed", t
    assert t["reason"] == SAVE_500
    assert "the agent said pass: Changes saved is shown." in t["causes"], t
    assert all(e["ok"] for e in t["expectations"]), t["expectations"]  # the toast was gone when the checks looked


def test_an_allowed_path_or_a_retry_that_succeeded_passes(run: CliRun) -> None:
    for name in ("allowed failure", "retried"):
        t = run.test(name)
        assert t["status"] == "passed", t
    # the allowed one's 500 is still evidence
    assert any(e["status"] == 500 for e in events(run, "allowed failure") if e["type"] == "failed_request")


def test_a_start_page_behind_basic_auth_is_blocked_not_failed(run: CliRun) -> None:
    t = run.test("basic auth")
    assert t["status"] == "errored", t
    assert t["reason"] == (
        "blocked: the preview answered with its host's login page: give the protection-bypass header with "
        "`extra-headers` (or `http-credentials` for basic auth)"
    )
    assert "agent: The page only says 401 Unauthorized." in t["causes"], t
    assert any(
        c.endswith('/errors/basic (WWW-Authenticate: Basic realm="Preview deployment")') and "HTTP 401" in c for c in t["causes"]
    ), t["causes"]
    assert run.exit_code == 1, run.stdout + run.stderr  # as for any errored test


def test_a_failure_after_a_blocked_navigation_names_the_host_and_the_action(run: CliRun) -> None:
    t = run.test("leaves the site")
    assert t["status"] == "failed", t
    assert BLOCKED in t["causes"], t
    # the failure card, as JUnit's failure body tells it
    case = next(c for c in ElementTree.parse(run.out / "junit.xml").iter("testcase") if c.get("name") == "leaves the site")
    failure = case.find("failure")
    assert failure is not None and f"- {BLOCKED}" in (failure.text or "").splitlines(), failure


@pytest.fixture(scope="module")
def replayed(tmp_path_factory: pytest.TempPathFactory, site: DemoSite) -> Iterator[CliRun]:
    """The save recorded by a passing agent run (its 500 allowed), then replayed: once as recorded, once with the
    allowance taken away and no agent to fall back to (`heal: false`)."""
    folder: Path = tmp_path_factory.mktemp("replayed")
    cache, env = folder / "replay-cache", clean_env()
    del env["PREVIEW_QA_NO_CACHE"]
    tests = "".join(f"  - name: {name}\n    start: /errors/toast\n{SAVE}" for name in ("allowed", "strict"))
    manifest = f'version: 1\ndefaults: {{max_steps: 4, timeout: 90, allow_server_errors: ["/errors/*"]}}\ntests:\n{tests}'
    (folder / "record").mkdir()
    (folder / "replay").mkdir()
    with scripted_run(folder / "record", site, manifest, SCENARIOS, "--cache", str(cache), env=env) as recorded:
        assert recorded.exit_code == 0, recorded.stdout + recorded.stderr
    strict = manifest.replace(
        "  - name: strict\n    start: /errors/toast\n",
        "  - name: strict\n    start: /errors/toast\n    allow_server_errors: []\n    heal: false\n",
    )
    with scripted_run(folder / "replay", site, strict, [], "--cache", str(cache), env=env) as done:
        yield done


def test_a_replay_fails_on_the_same_server_error_and_passes_where_it_is_allowed(replayed: CliRun) -> None:
    strict, allowed = replayed.test("strict"), replayed.test("allowed")
    assert (allowed["status"], allowed["path"]) == ("passed", "replayed"), allowed
    assert (strict["status"], strict["path"]) == ("failed", "replayed"), strict
    assert strict["reason"] == f"the replay did not pass ({SAVE_500}); heal: false, so the agent did not take over"
    assert strict["usage"]["llm_calls"] == 0, strict
