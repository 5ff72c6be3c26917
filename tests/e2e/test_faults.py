"""End to end: a broken LLM provider and an unreachable preview each give `errored`, quickly, naming the cause."""

from __future__ import annotations

import textwrap
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from preview_qa.demo.scripted_llm import ScriptedLLM
from preview_qa.engine.runner import PROVIDER_DOWN_AFTER
from tests.conftest import CliRun, preview_qa_run, scripted_run
from tests.e2e.processes import closed_port
from tests.site import DemoSite

pytestmark = pytest.mark.e2e

PASS = {"done": {"status": "pass", "reason": "The price is shown."}}
OK = {"actions": [{"wait": {"seconds": 1}}]}  # one answered call first: a provider that fails mid-test, not one that is down


MANIFEST = """
version: 1
defaults: {max_steps: 3, timeout: 120, start: /product}
tests:
  - {name: provider 429, task: "[p429] Read the price."}
  - {name: provider 503, task: "[p503] Read the price."}
  - {name: provider 500, task: "[p500] Read the price."}
  - {name: connection reset, task: "[reset] Read the price."}
  - {name: truncated response, task: "[truncated] Read the price."}
  - {name: hanging response, task: "[hang] Read the price.", timeout: 60, llm_timeout: 10}
  - {name: one 429 then an answer, task: "[p429-once] Read the price."}
  - {name: connection refused, task: "[unreachable] Read the page.", start: "http://127.0.0.1:{port}/",
     allowed_domains: [127.0.0.1]}
  - {name: DNS failure, task: "[unreachable] Read the page.", start: "http://preview-qa-test.invalid/",
     allowed_domains: [preview-qa-test.invalid]}
  - {name: TLS error, task: "[unreachable] Read the page.", start: "https://{host}/product",
     allowed_domains: [127.0.0.1]}
  - {name: 5xx start page, task: "[unreachable] Read the page.", start: /status/500}
  - {name: endless redirect, task: "[unreachable] Read the page.", start: /loop}
  - {name: never finishes loading, task: "[slow] Read the page.", start: /slow}
"""

SCENARIOS = [
    {"name": "p429", "match": "[p429]", "turns": [OK, {"http_status": 429, "retry_after": 1}]},
    {"name": "p503", "match": "[p503]", "turns": [OK, {"http_status": 503}]},
    {"name": "p500", "match": "[p500]", "turns": [OK, {"http_status": 500}]},
    {"name": "reset", "match": "[reset]", "turns": [OK, {"reset": True}]},
    {"name": "truncated", "match": "[truncated]", "turns": [OK, {**PASS, "truncate": True}]},
    {"name": "hang", "match": "[hang]", "turns": [OK, {"hang": True}]},
    {"name": "p429-once", "match": "[p429-once]", "turns": [{"http_status": 429, "retry_after": 1, "times": 1}, PASS]},
    {"name": "unreachable", "match": "[unreachable]", "turns": [PASS]},
    {"name": "slow", "match": "[slow]", "turns": [PASS]},
]


@pytest.fixture(scope="module")
def faults(tmp_path_factory: pytest.TempPathFactory, site: DemoSite) -> Iterator[CliRun]:
    text = textwrap.dedent(MANIFEST).replace("{port}", str(closed_port())).replace("{host}", site.url.split("//")[1])
    with scripted_run(tmp_path_factory.mktemp("faults"), site, text, SCENARIOS, "--concurrency", "3") as run:
        yield run


def _requests(run: CliRun, scenario: str) -> Counter[int]:
    assert run.llm is not None
    return Counter(c["status"] for c in run.llm.calls if c["scenario"] == scenario)


def test_the_run_completes_with_exit_code_1(faults: CliRun) -> None:
    assert faults.exit_code == 1, faults.stderr
    assert "Traceback" not in faults.stderr
    assert len(faults.results["tests"]) == 13


@pytest.mark.parametrize(
    ("name", "scenario", "reason"),
    [
        ("provider 429", "p429", "LLM provider error: HTTP 429: "),
        ("provider 503", "p503", "LLM provider error: HTTP 503: "),
        ("provider 500", "p500", "LLM provider error: HTTP 500: "),
    ],
)
def test_http_errors_are_retried_a_bounded_number_of_times_then_errored(
    faults: CliRun, name: str, scenario: str, reason: str
) -> None:
    t = faults.test(name)
    assert t["status"] == "errored" and t["reason"].startswith(reason), t
    assert "scripted HTTP" in t["reason"]  # the provider's own message is kept
    status = int(reason.split("HTTP ")[1][:3])
    # step 1 answered; steps 2 and 3 (max_steps=3) failed, each after 1 try + 2 SDK retries (honouring Retry-After)
    assert _requests(faults, scenario) == Counter({200: 1, status: 6})


@pytest.mark.parametrize(
    ("name", "scenario", "cause"),
    [
        ("connection reset", "reset", "Server disconnected without sending a response."),
        ("truncated response", "truncated", "peer closed connection without sending complete message body"),
    ],
)
def test_broken_connections_name_what_happened(faults: CliRun, name: str, scenario: str, cause: str) -> None:
    t = faults.test(name)
    assert t["status"] == "errored", t
    assert t["reason"].startswith("LLM provider error: no HTTP answer (RemoteProtocolError: ") and cause in t["reason"]
    assert _requests(faults, scenario) == Counter({200: 1, 0: 6})


def test_a_hanging_provider_is_given_up_on_and_named(faults: CliRun) -> None:
    t = faults.test("hanging response")
    assert t["status"] == "errored", t
    assert t["reason"] == "LLM provider error: the LLM call took over 10 s (llm_timeout); this test's timeout is 60 s"
    assert t["duration_s"] < 60  # within the test's own timeout: each call is given up on after its llm_timeout


def test_a_provider_that_recovers_after_a_429_passes(faults: CliRun) -> None:
    t = faults.test("one 429 then an answer")
    assert t["status"] == "passed", t
    assert _requests(faults, "p429-once") == Counter({429: 1, 200: 1})


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("connection refused", "preview unreachable: net::ERR_CONNECTION_REFUSED loading http://127.0.0.1:"),
        ("DNS failure", "preview unreachable: net::ERR_NAME_NOT_RESOLVED loading http://preview-qa-test.invalid/"),
        ("TLS error", "preview unreachable: net::ERR_SSL_PROTOCOL_ERROR loading https://127.0.0.1:"),
        ("5xx start page", "preview unreachable: HTTP 500 from http://127.0.0.1:"),
        ("endless redirect", "preview unreachable: net::ERR_TOO_MANY_REDIRECTS loading http://127.0.0.1:"),
    ],
)
def test_an_unreachable_preview_errors_without_asking_the_llm(faults: CliRun, name: str, reason: str) -> None:
    t = faults.test(name)
    assert t["status"] == "errored" and t["reason"].startswith(reason), t
    assert t["usage"]["llm_calls"] == 0  # not one LLM call spent on a preview that did not answer


def test_a_start_page_that_never_finishes_loading_errors(faults: CliRun, site: DemoSite) -> None:
    t = faults.test("never finishes loading")
    assert t["status"] == "errored", t
    assert t["reason"] == f"preview unreachable: the start page never finished loading ({site.url}/slow)"


BREAKER_MANIFEST = """
version: 1
defaults: {max_steps: 3, timeout: 120, start: /product}
tests:
""" + "".join(f'  - {{name: down {i}, task: "[down] Read the price."}}\n' for i in range(5))


def test_a_provider_down_for_the_whole_run_stops_costing_time(tmp_path: Path, site: DemoSite) -> None:
    manifest = tmp_path / "qa.yml"
    manifest.write_text(BREAKER_MANIFEST, encoding="utf-8")
    with ScriptedLLM([{"name": "down", "match": "[down]", "turns": [{"http_status": 500}]}]) as llm:
        run = preview_qa_run(manifest, site.url, tmp_path / "out", llm, "--concurrency", "1")
        asked = len(llm.requests)
    assert run.exit_code == 1, run.stderr
    tests = run.results["tests"]
    assert [t["reason"].split(":")[0] for t in tests] == ["LLM provider error"] * PROVIDER_DOWN_AFTER + ["LLM provider down"] * (
        5 - PROVIDER_DOWN_AFTER
    )
    assert tests[-1]["reason"].startswith(
        f"LLM provider down: {PROVIDER_DOWN_AFTER} tests in a row got no answer (last: HTTP 500: "
    )
    assert all(t["duration_s"] == 0 and t["steps"] == 0 for t in tests[PROVIDER_DOWN_AFTER:])
    assert asked == PROVIDER_DOWN_AFTER * 9  # nothing asked of the provider once it was known to be down
