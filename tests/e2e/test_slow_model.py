"""A model that takes its time, as one on a CPU or a busy shared GPU does: each answer 3 s late. Within the test's own
`llm_timeout` (or --llm-timeout) it completes; past a shorter one the test errors naming that bound and its own
timeout. Before, every call had a hidden bound (75 s at most, a sixth of the test's timeout) no setting could raise,
and the error said only "the provider did not answer in time"."""

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
defaults: {max_steps: 2, timeout: 60, llm_timeout: 1}
tests:
  - name: home
    task: "[home] Check the home page names the shop."
    expect: {text: "Acme demo shop"}
"""
SCENARIOS = [
    {
        "match": "[home]",
        "turns": [{"done": {"status": "pass", "reason": "It names it.", "quotes": ["Acme demo shop"]}, "delay": 3}],
    }
]


def run(folder: Path, site: DemoSite, *flags: str) -> CliRun:
    (folder / "qa.yml").write_text(textwrap.dedent(MANIFEST), encoding="utf-8")
    with ScriptedLLM(SCENARIOS) as llm:
        return preview_qa_run(folder / "qa.yml", site.url, folder / "out", llm, "--no-cache", *flags)


def test_a_slow_model_within_its_llm_timeout_completes(tmp_path: Path, site: DemoSite) -> None:
    done = run(tmp_path, site, "--llm-timeout", "20")  # the flag over the manifest's 1 s
    assert done.exit_code == 0 and done.test("home")["status"] == "passed", done.stdout + done.stderr


def test_past_its_llm_timeout_the_test_errors_naming_that_bound_and_its_own(tmp_path: Path, site: DemoSite) -> None:
    done = run(tmp_path, site)
    t = done.test("home")
    assert t["status"] == "errored", t
    assert t["reason"] == "LLM provider error: the LLM call took over 1 s (llm_timeout); this test's timeout is 60 s"
