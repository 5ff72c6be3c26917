"""End to end: a preview behind its host's login wall (a 401 sign-in page without the bypass header) is no broken
app. The preview wait says so once before any test; the agent reports it blocked by host protection; each test is
errored, never failed or passed, with the input that unlocks it."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.conftest import CliRun, scripted_run
from tests.site import DemoSite

pytestmark = pytest.mark.e2e

MANIFEST = """\
version: 1
tests:
  - name: home
    task: "[walled] Check the home page lists the products."
    max_steps: 3
  - name: cart
    start: /cart
    task: "[walled] Check the cart is empty."
    max_steps: 3
"""
SCENARIOS = [
    {
        "match": "[walled]",
        "turns": [
            {
                "done": {
                    "status": "blocked",
                    "reason": "A Vercel page asks to log in to continue to this deployment.",
                    "blocked_by": "host_protection",
                }
            }
        ],
    }
]
REMEDY = (
    "blocked: the preview answered with its host's login page: give the protection-bypass header with "
    "`extra-headers` (or `http-credentials` for basic auth)"
)


@pytest.fixture(scope="module")
def walled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CliRun]:
    folder: Path = tmp_path_factory.mktemp("walled")
    with (
        DemoSite(login_wall="Bypass-Token-Osprey-4410") as site,
        scripted_run(folder, site, MANIFEST, SCENARIOS, "--wait-timeout", "10") as run,
    ):
        yield run


def test_a_walled_preview_errors_every_test_with_the_remedy(walled: CliRun) -> None:
    assert walled.exit_code == 1, walled.stdout + walled.stderr
    for test in walled.results["tests"]:
        assert test["status"] == "errored", test
        assert test["reason"] == REMEDY
        assert "agent: A Vercel page asks to log in to continue to this deployment." in test["causes"]
        # the HTTP fact we saw ourselves, not read from the page
        assert any(c.startswith("the server answered HTTP 401 to http://127.0.0.1:") for c in test["causes"]), test


def test_the_preview_wait_says_once_that_the_preview_looks_protected(walled: CliRun) -> None:
    warning = (
        "the preview answered HTTP 401: it looks protected; give its protection-bypass header with "
        "`extra-headers`, or `http-credentials` for basic auth, or every test will be blocked"
    )
    assert walled.results["warnings"] == [warning]
    assert walled.stdout.count("warning: the preview answered HTTP 401") == 1, walled.stdout


def test_the_http_fact_is_an_event(walled: CliRun) -> None:
    lines = (walled.out / str(walled.test("home")["artifacts"]["events"])).read_text(encoding="utf-8").splitlines()
    denied = [json.loads(line) for line in lines if '"access_denied"' in line]
    assert [e["type"] for e in denied] == ["access_denied"], denied


def test_a_start_page_sent_to_another_host_is_no_unreachable_preview(run_cli: Callable[..., CliRun]) -> None:
    """The preview answers the start URL with a redirect to a host the test may not visit (a host's login on its own
    domain): the test is errored with what happened and the two ways on, not "preview unreachable", and no LLM call
    is made."""
    done = run_cli(
        """\
        version: 1
        tests:
          - name: sent away
            start: /elsewhere/login
            task: "Check the login page."
            max_steps: 3
        """,
        [],
    )
    assert done.exit_code == 1, done.stdout + done.stderr
    test = done.test("sent away")
    assert test["status"] == "errored", test
    assert test["reason"] == (
        "the preview sent the start page to another host, localhost, which this test may not visit: if that is its "
        "host's login, give the protection-bypass header with `extra-headers` (or `http-credentials` for basic auth); "
        "if the test should go there, add localhost to its `allowed_domains`"
    )
    assert done.llm is not None and done.llm.requests == []
