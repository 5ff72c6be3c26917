"""Replay without a browser: which recorded steps are replayed, and how a replay's verdict comes from fresh checks only."""

from __future__ import annotations

import json
from typing import Any

import pytest

from preview_qa.agent.replay import replayable_history
from preview_qa.manifest import TestSpec
from preview_qa.results import ExpectationOutcome, Status
from preview_qa.trace import AgentTrace, DoneReport, Recording
from preview_qa.verdict import decide, replay_needs_llm_check

OLD, NEW = "https://pr-41.preview.example", "https://pr-42.preview.example"
BUTTON = {"node_name": "BUTTON", "x_path": "html/body/form/button"}
INPUT = {"node_name": "INPUT", "x_path": "html/body/form/input[2]"}


def step(actions: list[dict[str, Any]], elements: list[Any], error: str | None = None) -> dict[str, Any]:
    return {"model_output": {"next_goal": "g", "action": actions}, "state": {"url": OLD, "interacted_element": elements},
            "result": [{"error": error}], "metadata": None}


HISTORY = {"history": [
    step([{"navigate": {"url": f"{OLD}/login", "new_tab": False}}], [None]),
    step([{"click": {"index": 9}}], [BUTTON], error="element not clickable"),
    step([{"extract": {"query": "price"}}, {"input": {"index": 4, "text": "<secret>pw</secret>"}}], [None, INPUT]),
    step([{"navigate": {"url": "https://elsewhere.example/x"}}, {"click": {"index": 5}}], [None, BUTTON]),
    step([{"done": {"data": {"status": "pass", "reason": "cached verdict"}}}], [None]),
]}


def test_replay_keeps_the_page_actions_on_the_new_preview_and_drops_the_rest() -> None:
    items = replayable_history(Recording(origin=OLD, history=HISTORY), NEW)["history"]
    actions = [i["model_output"]["action"] for i in items]
    assert actions == [
        [{"navigate": {"url": f"{NEW}/login", "new_tab": False}}],  # the recorded preview's URL moved to this one
        [{"input": {"index": 4, "text": "<secret>pw</secret>"}}],  # extract needs an LLM and changes no page
        [{"navigate": {"url": "https://elsewhere.example/x"}}, {"click": {"index": 5}}],  # other hosts stay
    ]  # the failed click is not repeated, and the cached `done` verdict is never replayed
    assert [i["state"]["interacted_element"] for i in items] == [[None], [INPUT], [None, BUTTON]]
    assert HISTORY["history"][0]["model_output"]["action"][0]["navigate"]["url"] == f"{OLD}/login"  # not mutated


def spec(**kw: Any) -> TestSpec:
    return TestSpec(**{"name": "t", "task": "log in", **kw})


def ok(check: str = "url", good: bool = True) -> ExpectationOutcome:
    return ExpectationOutcome(check=check, expected="URL containing '/dashboard'", found="http://x/login", ok=good)


@pytest.mark.parametrize(("test", "needs"), [
    (spec(expect={"url": "/dashboard"}), False), (spec(expect={"text": ["Hi"], "not_text": ["Error"]}), False),
    (spec(), True), (spec(expect={"url": "/d", "data": {"a": 1}}), True),
    (spec(expect={"title": "Shop"}, output_schema={"type": "object"}), True),
])
def test_code_alone_judges_a_replay_only_with_page_expectations_and_no_data(test: TestSpec, needs: bool) -> None:
    assert replay_needs_llm_check(test) is needs


def replayed(**kw: Any) -> AgentTrace:
    return AgentTrace(path="replayed", steps=2, **kw)


REPORT = DoneReport(text=json.dumps({"status": "pass", "reason": "the dashboard lists 3 orders"}), success=None)


@pytest.mark.parametrize(("test", "trace", "status", "reason"), [
    (spec(expect={"url": "/dashboard"}), replayed(expectations=[ok()]), Status.PASSED, "replayed the recorded steps"),
    (spec(expect={"url": "/dashboard"}), replayed(expectations=[ok(good=False)]), Status.FAILED, "expectation url failed"),
    (spec(expect={"url": "/dashboard"}), replayed(expectations=[]), Status.FAILED, "the page check after the replay"),
    (spec(expect={"url": "/dashboard"}), replayed(expectations=[ok()], replay_error="Could not find matching element"),
     Status.FAILED, "the recorded steps could not be replayed: Could not find"),
    (spec(), replayed(), Status.FAILED, "the page check after the replay gave no valid verdict"),
    (spec(), replayed(done=REPORT), Status.PASSED, "the dashboard lists 3 orders"),
    (spec(expect={"url": "/dashboard"}), replayed(done=REPORT, expectations=[ok(good=False)]), Status.FAILED,
     "expectation url failed"),
    (spec(expect={"data": {"price": "$19.99"}}, output_schema={"type": "object"}),
     replayed(done=DoneReport(text=json.dumps({"status": "pass", "reason": "r", "data": {"price": "$9"}}), success=None)),
     Status.FAILED, "expectation data.price failed"),
])
def test_a_replay_passes_only_on_fresh_evidence(test: TestSpec, trace: AgentTrace, status: Status, reason: str) -> None:
    verdict, _, _ = decide(test, trace)
    assert (verdict.status, verdict.reason[: len(reason)]) == (status, reason)
