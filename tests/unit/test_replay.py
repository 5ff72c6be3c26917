"""Replay without a browser: every recorded action is read and named, elements are matched without guessing, pages are
compared by place, and a replay's verdict comes from fresh checks only."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from preview_qa.agent.replay.recording import LiveElement, find_element, recorded_steps, same_place
from preview_qa.manifest.models import TestSpec
from preview_qa.results import Execution, ExpectationOutcome, Status
from preview_qa.verdict.agent_run import AgentRun, DoneReport
from preview_qa.verdict.decide import decide, replay_needs_llm_check
from tests.builders import spec

OLD, NEW = "https://pr-41.preview.example", "https://pr-42.preview.example"
BUTTON = {"node_name": "BUTTON", "x_path": "html/body/form/button"}
INPUT = {"node_name": "INPUT", "x_path": "html/body/form/input[2]"}


def step(actions: list[dict[str, Any]], elements: list[Any], error: str | None = None, results: int = 1) -> dict[str, Any]:
    """A history item; `results`: how many of its actions ran (browser-use stops a step after an error or a new page)."""
    return {
        "model_output": {"next_goal": "g", "action": actions},
        "state": {"url": OLD, "interacted_element": elements},
        "result": [{"error": None}] * (results - 1) + [{"error": error}],
        "metadata": None,
    }


HISTORY = {
    "history": [
        step([{"navigate": {"url": f"{OLD}/login", "new_tab": False}}], [None]),
        step([{"click": {"index": 9}}], [BUTTON], error="element not clickable"),
        step([{"extract": {"query": "price"}}, {"input": {"index": 4, "text": "<secret>pw</secret>"}}], [None, INPUT], results=2),
        step([{"navigate": {"url": "https://elsewhere.example/x"}}, {"click": {"index": 5}}], [None, BUTTON]),
        step([{"done": {"data": {"status": "pass", "reason": "cached verdict"}}}], [None]),
    ]
}


def test_every_recorded_action_is_kept_in_order_and_each_one_not_replayed_says_why() -> None:
    steps = recorded_steps(HISTORY, OLD, NEW)
    assert [s.number for s in steps] == [0, 1, 2, 3, 4]
    assert [[(a.name, a.skip) for a in s.actions] for s in steps] == [
        [("navigate", None)],
        [("click", "not replayed: it failed when recorded (element not clickable)")],
        [("extract", "not replayed: it changes nothing on the page"), ("input", None)],
        [("navigate", None), ("click", "not replayed: it never ran when recorded (browser-use stopped the step before it)")],
        [("done", "not replayed: the verdict is decided afresh")],
    ]
    assert steps[0].actions[0].params == {"url": f"{NEW}/login", "new_tab": False}  # moved onto this preview
    assert steps[3].actions[0].params["url"] == "https://elsewhere.example/x"  # other hosts stay
    assert steps[2].actions[1].element == INPUT and steps[2].url == NEW
    assert HISTORY["history"][0]["model_output"]["action"][0]["navigate"]["url"] == f"{OLD}/login"  # not mutated


def test_three_inputs_into_the_same_field_are_three_steps_to_replay() -> None:
    """browser-use's rerun_history skips a step that types into the same element as the step before."""
    field = {"node_name": "INPUT", "x_path": "html/body/form/input", "element_hash": 7, "ax_name": "New todo"}
    history = {
        "history": [
            step([{"input": {"index": 3, "text": t}}, {"send_keys": {"keys": "Enter"}}], [field, None], results=2)
            for t in ("Walk the dog", "Feed the cat", "Water the plants")
        ]
    }
    steps = recorded_steps(history, OLD, NEW)
    assert [[a.params.get("text") for a in s.page_actions] for s in steps] == [
        ["Walk the dog", None],
        ["Feed the cat", None],
        ["Water the plants", None],
    ]
    assert steps[1].page_actions[0].describe() == "input 'Feed the cat' into textbox 'New todo'"


@pytest.mark.parametrize(
    ("action", "element", "said"),
    [
        (
            {"input": {"index": 1, "text": "Walk the dog"}},
            {"node_name": "INPUT", "ax_name": "New todo"},
            "input 'Walk the dog' into textbox 'New todo'",
        ),
        ({"click": {"index": 1}}, {"node_name": "BUTTON", "ax_name": "Log in"}, "click button 'Log in'"),
        (
            {"click": {"index": 1}},
            {"node_name": "INPUT", "attributes": {"type": "checkbox", "aria-label": "Done: Walk"}},
            "click checkbox 'Done: Walk'",
        ),
        (
            {"select_dropdown": {"index": 1, "text": "High"}},
            {"node_name": "SELECT", "attributes": {"id": "priority"}},
            "select 'High' in combobox 'priority'",
        ),
        ({"click": {"index": 1}}, {"node_name": "A", "ax_name": "Help"}, "click link 'Help'"),
        ({"click": {"index": 1}}, None, "click an element that was not recorded"),
        ({"send_keys": {"keys": "Enter"}}, None, "press Enter"),
        ({"evaluate": {"code": "1"}}, None, 'evaluate {"code": "1"}'),
    ],
)
def test_an_action_is_named_by_what_it_does_to_which_element(action: dict[str, Any], element: Any, said: str) -> None:
    (only,) = recorded_steps({"history": [step([action], [element])]}, OLD, NEW)[0].actions
    assert only.describe() == said


@pytest.mark.parametrize(
    ("recorded", "live", "same"),
    [
        (f"{NEW}/login", f"{NEW}/login", True),
        (f"{NEW}/login", f"{NEW}/login?next=/x", True),  # the query is ignored
        (f"{NEW}/items/41/edit", f"{NEW}/items/42/edit", True),  # a replay creates new records
        (f"{NEW}/items/9f86d081884c7d65/edit", f"{NEW}/items/e3b0c44298fc1c14/edit", True),
        (f"{NEW}/todos#/active", f"{NEW}/todos#/completed", False),  # an SPA's route
        (f"{NEW}/dashboard", f"{NEW}/login", False),
        (f"{NEW}/login", f"{OLD}/login", False),
        ("", "about:blank", True),  # the recording did not know (before the first navigation)
    ],
)
def test_a_page_is_where_the_recording_was_by_origin_path_and_route(recorded: str, live: str, same: bool) -> None:
    assert same_place(recorded, live) is same


def live(tag: str, xpath: str, name: str | None = None, visible: bool = True, **attributes: str) -> LiveElement:
    """A live element; attribute names with `_` for `-`, and `name_` for `name` (the accessible name is `name`)."""
    return LiveElement(
        tag=tag,
        xpath=xpath,
        name=name,
        visible=visible,
        attributes={k.rstrip("_").replace("_", "-"): v for k, v in attributes.items()},
    )


def recorded(element: LiveElement, **changes: Any) -> dict[str, Any]:
    """What browser-use recorded of an element (its hashes are of no use without its own capture of the page)."""
    return {
        "node_name": element.tag.upper(),
        "x_path": element.xpath,
        "element_hash": 1,
        "stable_hash": 2,
        "ax_name": element.name,
        "attributes": element.attributes,
        **changes,
    }


EMAIL = live("input", "html/body/form/input[1]", "Email", id="email", name_="email")
PASSWORD = live("input", "html/body/form/input[2]", "Password", id="password")
BUTTON_NODE = live("button", "html/body/form/button", "Log in")
PAGE = [EMAIL, PASSWORD, BUTTON_NODE]


@pytest.mark.parametrize(
    ("wanted", "found"),
    [
        (recorded(PASSWORD), (1, "XPath")),
        (recorded(EMAIL, x_path="html/body/div/form/input[1]"), (0, "accessible name")),  # the form moved
        (recorded(EMAIL, x_path="x", ax_name="E-mail"), (0, "id")),  # renamed, same id
        # the same place, but another element there now (an input added before it): no match
        (recorded(EMAIL, x_path=PASSWORD.xpath, ax_name="Phone", attributes={}), (None, "element not found")),
        (recorded(BUTTON_NODE, node_name="A"), (None, "element not found")),  # a link where a button was
    ],
)
def test_matching_follows_browser_uses_order_without_taking_another_element(
    wanted: dict[str, Any], found: tuple[int | None, str]
) -> None:
    assert find_element(wanted, PAGE) == found


def test_several_equal_elements_settle_on_the_recorded_place_or_are_ambiguous() -> None:
    boxes = [live("input", f"html/body/ul/li[{i}]/input", "Done", id="done") for i in (1, 2, 3)]  # todo checkboxes
    assert find_element(recorded(boxes[1], x_path="html/body/ul/li[2]/input", ax_name="Done"), boxes) == (1, "XPath")
    assert find_element(recorded(boxes[1], x_path="html/body/ul/li[9]/input"), boxes) == (
        None,
        "ambiguous: several elements on the page match it by accessible name",
    )


def test_only_a_rendered_element_matches_by_name_or_attribute() -> None:
    """A hidden copy (a closed mobile menu) is no candidate; the element exactly at the recorded place still is."""
    hidden = live("a", "html/body/nav[1]/a", "Log in", visible=False)
    shown = live("a", "html/body/nav[2]/a", "Log in")
    assert find_element(recorded(shown, x_path="html/body/div/a"), [hidden, shown]) == (1, "accessible name")
    assert find_element(recorded(hidden), [hidden, shown]) == (0, "XPath")


@settings(max_examples=200, deadline=None)
@given(st.text(min_size=1), st.text(), st.sampled_from(["INPUT", "BUTTON", "A", "DIV"]))
def test_an_element_unlike_any_on_the_page_is_never_found(xpath: str, name: str, tag: str) -> None:
    """Property: a recorded element that shares no place, name or id with the page's elements is not found."""
    assume(name not in ("Email", "Password", "Log in", "email", "password"))
    assume(xpath not in {e.xpath for e in PAGE})
    wanted = {"node_name": tag, "x_path": xpath, "ax_name": name, "attributes": {"id": name}}
    assert find_element(wanted, PAGE)[0] is None


def ok(check: str = "url", good: bool = True) -> ExpectationOutcome:
    return ExpectationOutcome(check=check, expected="URL containing '/dashboard'", found="http://x/login", ok=good)


@pytest.mark.parametrize(
    ("test", "needs"),
    [
        (spec(expect={"url": "/dashboard"}), False),
        (spec(expect={"text": ["Hi"], "not_text": ["Error"]}), False),
        (spec(), True),
        (spec(expect={"url": "/d", "data": {"a": 1}}), True),
        (spec(expect={"title": "Shop"}, output_schema={"type": "object"}), True),
    ],
)
def test_code_alone_judges_a_replay_only_with_page_expectations_and_no_data(test: TestSpec, needs: bool) -> None:
    assert replay_needs_llm_check(test) is needs


def replayed(**kw: Any) -> AgentRun:
    return AgentRun(execution=Execution.REPLAYED, steps=2, **kw)


REPORT = DoneReport(text=json.dumps({"status": "pass", "reason": "the dashboard lists 3 orders"}), success=None)


@pytest.mark.parametrize(
    ("test", "trace", "status", "reason"),
    [
        (spec(expect={"url": "/dashboard"}), replayed(expectations=[ok()]), Status.PASSED, "replayed the recorded steps"),
        (spec(expect={"url": "/dashboard"}), replayed(expectations=[ok(good=False)]), Status.FAILED, "expectation url failed"),
        (spec(expect={"url": "/dashboard"}), replayed(expectations=[]), Status.FAILED, "the page check after the replay"),
        (
            spec(expect={"url": "/dashboard"}),
            replayed(expectations=[ok()], replay_error="step 2: click button 'Log in': element not found"),
            Status.FAILED,
            "replay drifted at step 2: click button 'Log in': element not found",
        ),
        (spec(), replayed(), Status.FAILED, "the page check after the replay gave no valid verdict"),
        (spec(), replayed(done=REPORT), Status.PASSED, "the dashboard lists 3 orders"),
        (
            spec(expect={"url": "/dashboard"}),
            replayed(done=REPORT, expectations=[ok(good=False)]),
            Status.FAILED,
            "expectation url failed",
        ),
        (
            spec(expect={"data": {"price": "$19.99"}}, output_schema={"type": "object"}),
            replayed(done=DoneReport(text=json.dumps({"status": "pass", "reason": "r", "data": {"price": "$9"}}), success=None)),
            Status.FAILED,
            "expectation data.price failed",
        ),
    ],
)
def test_a_replay_passes_only_on_fresh_evidence(test: TestSpec, trace: AgentRun, status: Status, reason: str) -> None:
    verdict = decide(test, trace).verdict
    assert (verdict.status, verdict.reason[: len(reason)]) == (status, reason)
