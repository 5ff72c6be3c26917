"""A provider refusal that every call would get (a wrong key, the wrong protocol's path) ends the test at once, with
the provider's own message and, for a 404, the path the client asked; it is not asked again step after step, nor by the
SDK (a 5xx saying the request is not supported). Every
HTTP request to the provider is counted (`llm_requests`) beside the calls."""

from __future__ import annotations

import textwrap
from pathlib import Path

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


def run(folder: Path, site: DemoSite, scenarios: list[dict[str, object]], *flags: str) -> tuple[CliRun, ScriptedLLM]:
    (folder / "qa.yml").write_text(textwrap.dedent(MANIFEST), encoding="utf-8")
    with ScriptedLLM(scenarios) as llm:
        return preview_qa_run(folder / "qa.yml", site.url, folder / "out", llm, "--no-cache", *flags), llm


def test_a_wrong_key_ends_the_test_on_its_first_refusal(tmp_path: Path, site: DemoSite) -> None:
    refusal = {"http_status": 401, "message": "Incorrect API key provided: sk-wrong"}
    done, llm = run(tmp_path, site, [{"match": "[home]", "turns": [refusal]}])
    t = done.test("home")
    assert t["status"] == "errored" and "HTTP 401" in t["reason"] and "Incorrect API key provided" in t["reason"], t
    assert len(llm.calls) == 1  # before: once a step, up to max_steps (4)
    assert (t["usage"]["llm_calls"], t["usage"]["llm_requests"]) == (1, 1)


def test_the_wrong_protocol_s_404_names_the_path_the_client_asked(tmp_path: Path, site: DemoSite) -> None:
    done, llm = run(tmp_path, site, [{"match": "[home]", "turns": [{"done": {"status": "pass", "reason": "x"}}]}],
                    "--provider", "ollama")  # fmt: skip
    t = done.test("home")
    assert t["status"] == "errored" and "404" in t["reason"] and "(to POST /v1/api/chat)" in t["reason"], t
    assert [c["status"] for c in llm.calls] == [404]


def test_a_server_error_saying_the_request_is_not_supported_is_asked_once(tmp_path: Path, site: DemoSite) -> None:
    refusal = {"http_status": 500, "message": "tools param requires --jinja flag: not supported"}
    done, llm = run(tmp_path, site, [{"match": "[home]", "turns": [refusal]}])
    t = done.test("home")
    assert t["status"] == "errored" and "not supported" in t["reason"], t
    assert [c["status"] for c in llm.calls] == [500]  # before: 3 requests, the SDK's 2 retries of the same refusal
    assert (t["usage"]["llm_calls"], t["usage"]["llm_requests"]) == (1, 1)


def test_a_server_s_bad_moment_is_still_retried(tmp_path: Path, site: DemoSite) -> None:
    flaky = [{"http_status": 503, "times": 1}, {"done": {"status": "pass", "reason": "It names it."}}]
    done, _ = run(tmp_path, site, [{"match": "[home]", "turns": flaky}])
    t = done.test("home")
    assert t["status"] == "passed", t
    assert (t["usage"]["llm_calls"], t["usage"]["llm_requests"]) == (1, 2)  # the SDK asked again: two requests
