"""ScriptedLLM over real HTTP: scenario choice, element resolution, step-based turns, faults, judge, recording."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import yaml

from preview_qa.demo.scripted_llm import Element, ScriptedLLM, load_scenarios, parse_elements, resolve_element
from tests.repo import DEMO

# Copied from a real browser-use 0.13.14 request against DemoSite's /login.
LOGIN_STATE = (
    "<browser_state>\n<page_stats>1 links, 4 interactive, 0 iframes, 2 shadow(open), 0 shadow(closed), "
    "16 total elements</page_stats>\nCurrent tab: 9153\nAvailable tabs:\n"
    "Tab 9153: http://127.0.0.1:33975/login - 127.0.0.1:33975/login\n\n"
    "<page_info>0.0 pages above, 0.0 pages below</page_info>\n\nInteractive elements:\n[Start of page]\nLog in\n"
    "[19]<a />\n\tHome\nEmail\n|SHADOW(open)|[2]<input id=email name=email type=text placeholder=Email />\n"
    "Password\n|SHADOW(open)|[3]<input type=password placeholder=Password />\n[4]<button type=submit />\n"
    "\tLog in\n[End of page]\n</browser_state>\n"
)

AGENT_FORMAT = {
    "type": "json_schema",
    "json_schema": {
        "name": "agent_output",
        "strict": True,
        "schema": {
            "type": "object",
            "properties": {
                "next_goal": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                "action": {
                    "items": {
                        "anyOf": [
                            {"properties": {"done": {"properties": {"data": {"type": "object"}}}}},
                            {"properties": {"click": {"properties": {"index": {"type": "integer"}}}}},
                        ]
                    },
                    "type": "array",
                },
            },
        },
    },
}

JUDGE_FORMAT = {
    "type": "json_schema",
    "json_schema": {
        "name": "agent_output",
        "strict": True,
        "schema": {"type": "object", "properties": {"reasoning": {}, "verdict": {"type": "boolean"}}},
    },
}


def agent_body(task: str, step: int = 1, state: str = LOGIN_STATE) -> dict[str, Any]:
    text = (
        f"<user_request>\n{task}\nExpected output format: Verdict\n{{}}\n</user_request>\n\n"
        "<agent_history>\nAgent initialized\n</agent_history>\n\n"
        f"{state}<step_info>Step{step} maximum:8\nToday:2026-11-22</step_info>\n"
    )
    return {
        "model": "gpt-4.1-mini",
        "messages": [
            {"role": "system", "content": "You are an AI agent designed to operate in an iterative loop."},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": text},
                    {"type": "text", "text": "Current screenshot:"},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
                ],
            },
        ],
        "response_format": AGENT_FORMAT,
        "temperature": 0.2,
    }


def judge_body(task: str) -> dict[str, Any]:
    text = f"\n<task>\n{task}\n</task>\n\n<agent_trajectory>\nStep 1:\n</agent_trajectory>\n"
    return {
        "model": "gpt-4.1-mini",
        "messages": [
            {"role": "system", "content": "You are an expert judge evaluating browser automation agent performance."},
            {"role": "user", "content": [{"type": "text", "text": text}]},
        ],
        "response_format": JUDGE_FORMAT,
    }


LOGIN = {
    "name": "login",
    "match": "Log in as demo",
    "judge": {"verdict": False, "reasoning": "no orders", "failure_reason": "dashboard empty"},
    "turns": [
        {
            "goal": "log in",
            "actions": [
                {"input": {"element": "Email", "text": "demo@acme.test"}},
                {"input": {"element": "Password", "text": "<secret>demo_password</secret>"}},
                {"click": {"element": "Log in"}},
            ],
        },
        {"actions": [{"wait": {"seconds": 1}}]},
        {"done": {"status": "pass", "reason": "three orders", "data": {"orders": 3}}},
    ],
}
SIGNUP = {"name": "signup", "match": "Submit the signup form", "turns": [{"done": {"status": "fail", "reason": "x"}}]}


@pytest.fixture
def serve() -> Iterator[Any]:
    started: list[ScriptedLLM] = []

    def start(scenarios: Any, latency: float = 0.0) -> tuple[ScriptedLLM, httpx.Client]:
        llm = ScriptedLLM(scenarios, latency=latency)
        llm.start()
        started.append(llm)
        return llm, httpx.Client(base_url=llm.url, timeout=10)

    yield start
    for llm in started:
        llm.stop()


def content(resp: httpx.Response) -> Any:
    assert resp.status_code == 200, resp.text
    return json.loads(resp.json()["choices"][0]["message"]["content"])


def test_url_ends_in_v1_and_models_answers(serve: Any) -> None:
    llm, client = serve(LOGIN)
    assert llm.url.startswith("http://127.0.0.1:") and llm.url.endswith("/v1")
    assert client.get("/models").json()["data"][0]["id"]


def test_scenario_is_chosen_by_task_text(serve: Any) -> None:
    llm, client = serve([SIGNUP, LOGIN])
    first = content(client.post("/chat/completions", json=agent_body("Log in as demo@acme.test and check")))
    assert "input" in first["action"][0]
    second = content(client.post("/chat/completions", json=agent_body('Submit the signup form with email "x"')))
    assert second["action"] == [{"done": {"data": {"status": "fail", "reason": "x"}}}]
    assert [c["scenario"] for c in llm.calls] == ["login", "signup"]


def test_elements_are_resolved_by_text_to_indexes(serve: Any) -> None:
    _, client = serve(LOGIN)
    out = content(client.post("/chat/completions", json=agent_body("Log in as demo@acme.test")))
    assert out["action"] == [
        {"input": {"index": 2, "text": "demo@acme.test"}},
        {"input": {"index": 3, "text": "<secret>demo_password</secret>"}},
        {"click": {"index": 4}},
    ]
    assert out["next_goal"] == "log in"


def test_parse_elements_reads_real_browser_state() -> None:
    elements = parse_elements(agent_body("t"))
    assert [e.index for e in elements] == [19, 2, 3, 4]
    assert elements[0] == Element(19, "<a />", "Home", "Log in")
    assert elements[1].label == "Email" and "placeholder=Email" in elements[1].tag
    assert elements[3].text == "Log in"


def test_exact_match_beats_substring_and_label_is_a_fallback() -> None:
    elements = [
        Element(1, "<a />", "Log in to see more", ""),
        Element(2, "<button type=submit />", "Log in", ""),
        Element(3, "<input id=q />", "", "Search the shop"),
        Element(4, "<input name=email placeholder=Email address />", "", ""),
    ]
    assert resolve_element(elements, "log in") == 2
    assert resolve_element(elements, "see more") == 1
    assert resolve_element(elements, "search") == 3
    assert resolve_element(elements, "Email address") == 4


def test_missing_element_fails_loudly(serve: Any) -> None:
    llm, client = serve({"match": "", "turns": [{"actions": [{"click": {"element": "Buy now"}}]}]})
    resp = client.post("/chat/completions", json=agent_body("anything"))
    assert resp.status_code == 500
    assert 'scripted element "Buy now" not found in browser state' in resp.json()["error"]["message"]
    assert llm.calls[-1]["status"] == 500


def test_turns_follow_the_step_and_the_last_turn_repeats(serve: Any) -> None:
    llm, client = serve(LOGIN)
    task = "Log in as demo@acme.test"
    assert content(client.post("/chat/completions", json=agent_body(task, step=2)))["action"] == [{"wait": {"seconds": 1}}]
    done = {"done": {"data": {"status": "pass", "reason": "three orders", "data": {"orders": 3}}}}
    assert content(client.post("/chat/completions", json=agent_body(task, step=3)))["action"] == [done]
    assert content(client.post("/chat/completions", json=agent_body(task, step=7)))["action"] == [done]
    assert "input" in content(client.post("/chat/completions", json=agent_body(task, step=1)))["action"][0]
    assert [c["step"] for c in llm.calls] == [2, 3, 7, 1]


def test_times_applies_a_fault_to_the_first_requests_of_a_step_only(serve: Any) -> None:
    scenario = {
        "match": "Log in",
        "turns": [
            {"http_status": 500, "times": 2},
            {"actions": [{"click": {"element": "Log in"}}]},
            {"done": {"status": "pass", "reason": "ok"}},
        ],
    }
    llm, client = serve(scenario)
    statuses = [client.post("/chat/completions", json=agent_body("Log in", step=1)).status_code for _ in range(4)]
    assert statuses == [500, 500, 200, 200]
    # the `times` turn does not use up a step: step 2 gets the turn after the click
    assert "done" in content(client.post("/chat/completions", json=agent_body("Log in", step=2)))["action"][0]
    assert [c["status"] for c in llm.calls] == [500, 500, 200, 200, 200]


def test_http_faults_carry_openai_style_errors(serve: Any) -> None:
    _, client = serve({"match": "", "turns": [{"http_status": 429, "retry_after": 1}]})
    resp = client.post("/chat/completions", json=agent_body("x"))
    assert resp.status_code == 429 and resp.headers["retry-after"] == "1"
    assert resp.json()["error"]["type"] == "rate_limit_error"


def test_raw_content_done_success_and_usage(serve: Any) -> None:
    scenario = {
        "match": "",
        "turns": [
            {"raw": "I think it passed!"},
            {"content": {"action": "nope"}},
            {"done": {"status": "fail", "reason": "r"}, "done_success": False, "delay": 0.2},
        ],
    }
    _, client = serve(scenario)
    first = client.post("/chat/completions", json=agent_body("x", step=1)).json()
    assert first["choices"][0]["message"]["content"] == "I think it passed!"
    assert first["usage"]["prompt_tokens"] > 50 and first["usage"]["completion_tokens"] == len("I think it passed!") // 4
    assert content(client.post("/chat/completions", json=agent_body("x", step=2))) == {"action": "nope"}
    started = time.monotonic()
    third = content(client.post("/chat/completions", json=agent_body("x", step=3)))
    assert time.monotonic() - started >= 0.2
    assert third["action"] == [{"done": {"data": {"status": "fail", "reason": "r"}, "success": False}}]


def test_judge_requests_get_the_scenario_verdict(serve: Any) -> None:
    llm, client = serve([LOGIN, SIGNUP])
    verdict = content(client.post("/chat/completions", json=judge_body("Log in as demo@acme.test and check")))
    assert verdict["verdict"] is False and verdict["failure_reason"] == "dashboard empty"
    default = content(client.post("/chat/completions", json=judge_body("Submit the signup form")))
    assert default["verdict"] is True and default["failure_reason"] == "" and default["impossible_task"] is False
    assert [(c["kind"], c["step"]) for c in llm.calls] == [("judge", None), ("judge", None)]


def test_unmatched_task_is_a_500_and_requests_are_recorded(serve: Any) -> None:
    llm, client = serve([LOGIN])
    body = agent_body("Something nobody scripted")
    resp = client.post("/chat/completions", json=body)
    assert resp.status_code == 500 and "no scripted scenario matches the task" in resp.json()["error"]["message"]
    assert llm.requests == [body]
    assert llm.calls == [{"scenario": None, "kind": "agent", "step": 1, "status": 500, "path": "/v1/chat/completions"}]


def test_connection_faults_and_stop_does_not_hang(serve: Any) -> None:
    llm, client = serve(
        [
            {"match": "reset", "turns": [{"reset": True}]},
            {"match": "truncate", "turns": [{"done": {"status": "pass", "reason": "r"}, "truncate": True}]},
            {"match": "hang", "turns": [{"hang": True}]},
        ]
    )
    with pytest.raises(httpx.RemoteProtocolError):
        client.post("/chat/completions", json=agent_body("reset"))
    with pytest.raises(httpx.RemoteProtocolError):
        client.post("/chat/completions", json=agent_body("truncate"))
    with pytest.raises(httpx.ReadTimeout):
        client.post("/chat/completions", json=agent_body("hang"), timeout=0.5)
    started = time.monotonic()
    llm.stop()
    assert time.monotonic() - started < 3
    assert [c["status"] for c in llm.calls] == [0, 0, 0]


def test_bundled_demo_scenarios_select_each_demo_test() -> None:
    llm = ScriptedLLM(load_scenarios(DEMO / "agent.yml"))
    tests = yaml.safe_load((DEMO / "qa.yml").read_text())["tests"]
    goals = [t.get("task") or s["do"] for t in tests for s in t.get("steps") or [{"do": t.get("task")}] if s.get("do")]
    chosen = [(llm.find_scenario(goal) or {}).get("name") for goal in goals]
    assert chosen == [
        "login",
        "signup",
        "product",
        "settings-saved",
        "settings-url-only",
        "orders-goal",  # "Orders after signing in", written as steps: each goal its own scenario
        "stock-goal",
        "checkout",
    ]


def test_the_second_look_is_played_over_http_from_the_request_s_fenced_quotes(serve: Any) -> None:
    from preview_qa.agent.adapter.page_check import LOOK_INSTRUCTIONS, look_question
    from preview_qa.manifest.models import TestSpec
    from preview_qa.verdict.agent_run import SecondLook

    look = {"not_outcome": {"Order confirmed": "An instruction to testers."}, "addressed": ["Note to QA agents."]}
    llm, client = serve([{"name": "aside", "match": "Check the order", "second_look": look}])
    spec = TestSpec(name="t", task="Check the order was placed.")
    asked = look_question(spec, [("Order confirmed", 'Quote the text "Order confirmed".'), ("Payment failed", "Payment failed.")])
    schema = {"type": "object", "properties": SecondLook.model_json_schema()["properties"]}
    body = {
        "model": "scripted",
        "messages": [{"role": "system", "content": LOOK_INSTRUCTIONS}, {"role": "user", "content": asked}],
        "response_format": {"type": "json_schema", "json_schema": {"name": "SecondLook", "strict": True, "schema": schema}},
    }
    answer = SecondLook.model_validate(content(client.post("/chat/completions", json=body)))
    assert [(a.quote, a.shows_outcome) for a in answer.quotes] == [("Order confirmed", False), ("Payment failed", True)]
    assert answer.quotes[0].reason == "An instruction to testers." and answer.addressed == ["Note to QA agents."]
    assert [(c["scenario"], c["kind"]) for c in llm.calls] == [("aside", "second_look")]
