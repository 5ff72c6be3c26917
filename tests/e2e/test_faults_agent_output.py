"""Property test through the real stack: generated agent outputs, played by the scripted LLM to real browser-use in real
Chromium, never pass a test and never crash the run. Few cases (each is a CLI run); the pure level runs thousands."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from preview_qa.demo.scripted_llm import ScriptedLLM
from tests.conftest import preview_qa_run
from tests.site import DemoSite
from tests.strategies import RAN, json_value, non_utf8, report_objects

pytestmark = pytest.mark.e2e

TESTS_PER_RUN = 5
text = st.one_of(
    st.text(st.characters(codec=None, exclude_categories=()), max_size=200),
    non_utf8,
    st.integers(1000, 50_000).map(lambda n: "ä\x00" * n),
)


def _exact_pass(obj: Any, success: bool | None) -> bool:
    return (
        isinstance(obj, dict)
        and obj.get("status") == "pass"
        and isinstance(obj.get("reason"), str)
        and obj["reason"].strip() != ""
        and set(obj) <= {"status", "reason", "data"}
        and success is not False
    )


bad_done = st.tuples(report_objects(), st.booleans()).filter(lambda d: not _exact_pass(*d))
turns = st.one_of(
    text.map(lambda t: {"raw": t}),  # prose, control characters, lone surrogates, huge strings
    json_value.map(lambda v: {"content": v}),  # JSON of any shape as the whole agent output
    bad_done.map(lambda d: {"content": {"action": [{"done": {"data": d[0], "success": d[1]}}]}}),
    bad_done.map(lambda d: {"done": d[0], "done_success": d[1]}),  # through the structured done action
    st.just({"done": {"status": "pass", "reason": "All good."}, "done_success": False}),  # the classic contradiction
)


@settings(
    max_examples=2,
    deadline=None,
    database=None,
    phases=[Phase.generate],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(outputs=st.lists(st.lists(turns, min_size=1, max_size=2), min_size=TESTS_PER_RUN, max_size=TESTS_PER_RUN))
def test_no_generated_agent_output_passes_through_the_real_stack(
    outputs: list[list[dict[str, Any]]], tmp_path_factory: pytest.TempPathFactory, site: DemoSite
) -> None:
    RAN["real stack: agent outputs (tests)"] = RAN.get("real stack: agent outputs (tests)", 0) + len(outputs)
    folder = tmp_path_factory.mktemp("generated")
    manifest = folder / "qa.yml"
    manifest.write_text(
        "version: 1\ndefaults: {max_steps: 4, timeout: 90, start: /product}\ntests:\n"
        + "".join(f'  - {{name: "case {i}", task: "[case-{i}] Read the price."}}\n' for i in range(len(outputs))),
        encoding="utf-8",
    )
    scenarios = [{"match": f"[case-{i}]", "turns": t} for i, t in enumerate(outputs)]
    with ScriptedLLM(scenarios) as llm:
        run = preview_qa_run(manifest, site.url, folder / "out", llm, "--concurrency", "3")
    assert run.exit_code == 1, run.stderr[-3000:]
    assert "Traceback" not in run.stderr
    results = run.results
    assert len(results["tests"]) == len(outputs)
    for test, played in zip(results["tests"], outputs, strict=True):
        assert test["status"] in ("failed", "errored"), (test, played)
        assert test["status"] == "failed" or not test["reason"].startswith("LLM provider"), (test, played)
