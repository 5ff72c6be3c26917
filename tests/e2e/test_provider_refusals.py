"""A provider refusal that every call would get (a wrong key, the wrong protocol's path) ends the test at once, with
the provider's own message and, for a 404, the path the client asked; it is not asked again step after step, nor by the
SDK (a 5xx saying the request is not supported). Every
HTTP request to the provider is counted (`llm_requests`) beside the calls. The three over OpenAI's protocol are three
tests of one run (each asserts on its own scenario's calls); the wrong protocol's has a run of its own."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from preview_qa.demo.scripted_llm import ScriptedLLM
from tests.conftest import CliRun, preview_qa_run
from tests.site import DemoSite

pytestmark = pytest.mark.e2e

MANIFEST = """
version: 1
defaults: {max_steps: 4, timeout: 90}
tests:
  - name: home
    task: "[home] Check the home page names the shop."
"""
# One test a refusal, in this order: two errored in a row stay below the provider-down breaker's three
REFUSALS = {
    "wrong key": [{"http_status": 401, "message": "Incorrect API key provided: sk-wrong"}],
    "not supported": [{"http_status": 500, "message": "tools param requires --jinja flag: not supported"}],
    "bad moment": [{"http_status": 503, "times": 1}, {"done": {"status": "pass", "reason": "It names it."}}],
}


def run(folder: Path, site: DemoSite, scenarios: list[dict[str, object]], *flags: str) -> tuple[CliRun, ScriptedLLM]:
    (folder / "qa.yml").write_text(textwrap.dedent(MANIFEST), encoding="utf-8")
    with ScriptedLLM(scenarios) as llm:
        return preview_qa_run(folder / "qa.yml", site.url, folder / "out", llm, "--no-cache", *flags), llm


@pytest.fixture(scope="module")
def refused(tmp_path_factory: pytest.TempPathFactory, site: DemoSite) -> Iterator[tuple[CliRun, ScriptedLLM]]:
    """One run of the three tests over OpenAI's protocol, one after another."""
    folder = tmp_path_factory.mktemp("refusals")
    tests = "".join(f'  - name: {name}\n    task: "[{name}] Check the home page names the shop."\n' for name in REFUSALS)
    (folder / "qa.yml").write_text(f"version: 1\ndefaults: {{max_steps: 4, timeout: 90}}\ntests:\n{tests}", encoding="utf-8")
    scenarios = [{"name": name, "match": f"[{name}]", "turns": turns} for name, turns in REFUSALS.items()]
    with ScriptedLLM(scenarios) as llm:
        yield preview_qa_run(folder / "qa.yml", site.url, folder / "out", llm, "--no-cache", "--concurrency", "1"), llm


def calls_of(llm: ScriptedLLM, name: str) -> list[dict[str, Any]]:
    return [c for c in llm.calls if c["scenario"] == name]


def test_a_wrong_key_ends_the_test_on_its_first_refusal(refused: tuple[CliRun, ScriptedLLM]) -> None:
    done, llm = refused
    t = done.test("wrong key")
    assert t["status"] == "errored" and "HTTP 401" in t["reason"] and "Incorrect API key provided" in t["reason"], t
    assert len(calls_of(llm, "wrong key")) == 1  # before: once a step, up to max_steps (4)
    assert (t["usage"]["llm_calls"], t["usage"]["llm_requests"]) == (1, 1)


def test_the_wrong_protocol_s_404_names_the_path_the_client_asked(tmp_path: Path, site: DemoSite) -> None:
    done, llm = run(tmp_path, site, [{"match": "[home]", "turns": [{"done": {"status": "pass", "reason": "x"}}]}],
                    "--provider", "ollama")  # fmt: skip
    t = done.test("home")
    assert t["status"] == "errored" and "404" in t["reason"] and "(to POST /v1/api/chat)" in t["reason"], t
    assert [c["status"] for c in llm.calls] == [404]


def test_a_server_error_saying_the_request_is_not_supported_is_asked_once(refused: tuple[CliRun, ScriptedLLM]) -> None:
    done, llm = refused
    t = done.test("not supported")
    assert t["status"] == "errored" and "not supported" in t["reason"], t
    assert [c["status"] for c in calls_of(llm, "not supported")] == [500]  # before: 3 requests, the SDK's 2 retries
    assert (t["usage"]["llm_calls"], t["usage"]["llm_requests"]) == (1, 1)


def test_a_server_s_bad_moment_is_still_retried(refused: tuple[CliRun, ScriptedLLM]) -> None:
    done, _ = refused
    t = done.test("bad moment")
    assert t["status"] == "passed", t
    assert (t["usage"]["llm_calls"], t["usage"]["llm_requests"]) == (1, 2)  # the SDK asked again: two requests


def test_no_request_of_the_run_went_unmatched(refused: tuple[CliRun, ScriptedLLM]) -> None:
    """Each call above belongs to its test's scenario: none was left without one (each test saw only its own)."""
    _, llm = refused
    assert {c["scenario"] for c in llm.calls} == set(REFUSALS), llm.calls
