"""Replay cache end to end: record on a pass, replay with no agent LLM call, judge from fresh evidence, fall back when a
replay does not hold (and write the new trace back), keep secrets out of the cache, and --no-cache."""

from __future__ import annotations

import json
import textwrap
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from preview_qa.demo.scripted_llm import ScriptedLLM
from tests.conftest import DEMO_PASSWORD, CliRun, cached_cli, clean_env
from tests.site import DemoSite

pytestmark = pytest.mark.e2e


def login(email: str = "demo@acme.test") -> list[dict[str, Any]]:
    return [
        {"input": {"element": "Email", "text": email}},
        {"input": {"element": "Password", "text": "<secret>pw</secret>"}},
        {"click": {"element": "Log in"}},
    ]


def logs_in(tag: str) -> str:
    return f"""
  - name: {tag}
    start: /login
    task: "[{tag}] Log in with password <secret>pw</secret> and check the dashboard."
    secrets: {{pw: DEMO_PASSWORD}}
    expect: {{url: /dashboard, text: ["Signed in as demo@acme.test"]}}"""


MANIFEST = f"""
version: 1
defaults: {{max_steps: 4, timeout: 120}}
tests:{logs_in("login")}
  - name: price
    start: /product
    task: "[price] Read the product's price."
    output_schema: {{type: object, properties: {{price: {{type: string}}}}, required: [price]}}
    expect: {{data: {{price: "$19.99"}}}}{logs_in("button-moved")}{logs_in("typed-wrong")}
  - name: fails
    start: /product
    task: "[fails] Check the price is $9.99."
"""

PASS = {"done": {"status": "pass", "reason": "Signed in."}}
SCENARIOS = [
    *(
        {"name": tag, "match": f"[{tag}]", "turns": [{"actions": login()}, PASS]}
        for tag in ("login", "button-moved", "typed-wrong")
    ),
    {
        "name": "price",
        "match": "[price]",
        "turns": [
            {"actions": [{"scroll": {"down": True}}]},
            {"done": {"status": "pass", "reason": "Read it.", "data": {"price": "$19.99"}}},
        ],
        "other": json.dumps({"status": "pass", "reason": "The page shows $19.99.", "data": {"price": "$19.99"}}),
    },
    {"name": "fails", "match": "[fails]", "turns": [{"done": {"status": "fail", "reason": "It is $19.99."}}]},
]


@dataclass
class Runs:
    record: CliRun
    replay: CliRun
    no_cache: CliRun
    cache: Path
    calls: dict[str, list[dict[str, Any]]]  # the scripted LLM's requests during each run, by its output folder
    entries_after_record: dict[str, dict[str, Any]]


def entries(cache: Path) -> dict[str, dict[str, Any]]:
    found = {}
    for path in cache.glob("*.json"):
        entry = json.loads(path.read_text(encoding="utf-8"))
        found[entry["test"]] = entry | {"_path": str(path)}
    return found


def rewrite(entry: dict[str, Any], change: Any) -> None:
    for item in entry["history"]["history"]:
        change(item)
    Path(entry["_path"]).write_text(json.dumps({k: v for k, v in entry.items() if k != "_path"}), encoding="utf-8")


def move_the_elements(item: dict[str, Any]) -> None:
    """As if the login form had been rebuilt: no recorded element can be found again."""
    for element in item["state"]["interacted_element"] or []:
        if element:
            element.update(
                element_hash=1,
                stable_hash=1,
                x_path="html/body/nowhere",
                ax_name="gone",
                attributes={"name": "gone", "id": "gone"},
            )


def type_a_wrong_email(item: dict[str, Any]) -> None:
    for action in item["model_output"]["action"]:
        if "input" in action and action["input"]["text"] == "demo@acme.test":
            action["input"]["text"] = "nobody@acme.test"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, site: DemoSite) -> Iterator[Runs]:
    folder = tmp_path_factory.mktemp("cache")
    manifest, cache = folder / "qa.yml", folder / "replay-cache"
    manifest.write_text(textwrap.dedent(MANIFEST), encoding="utf-8")
    env = clean_env()
    del env["PREVIEW_QA_NO_CACHE"]
    calls: dict[str, list[dict[str, Any]]] = {}
    with ScriptedLLM(SCENARIOS) as llm:
        cli = cached_cli(manifest, site.url, llm, cache, env, calls)

        record = cli("record")
        recorded = entries(cache)
        if {"button-moved", "typed-wrong"} <= set(recorded):
            rewrite(recorded["button-moved"], move_the_elements)
            rewrite(recorded["typed-wrong"], type_a_wrong_email)
        replay = cli("replay", "--trace", "on")
        no_cache = cli("no-cache", "--no-cache", "--only", "login")
        yield Runs(record, replay, no_cache, cache, calls, recorded)


def calls(runs: Runs, run: CliRun, scenario: str, kind: str | None = None) -> list[dict[str, Any]]:
    return [c for c in runs.calls[run.out.name] if c["scenario"] == scenario and kind in (None, c["kind"])]


def test_first_run_runs_the_agent_and_records_only_what_passed(runs: Runs) -> None:
    assert runs.record.exit_code == 1, runs.record.stderr
    assert {t["name"]: (t["status"], t["path"]) for t in runs.record.results["tests"]} == {
        "login": ("passed", "agent"),
        "price": ("passed", "agent"),
        "button-moved": ("passed", "agent"),
        "typed-wrong": ("passed", "agent"),
        "fails": ("failed", "agent"),
    }
    assert set(runs.entries_after_record) == {"login", "price", "button-moved", "typed-wrong"}


def test_a_replay_makes_no_agent_llm_call_and_passes_on_the_live_pages_expectations(runs: Runs) -> None:
    t = runs.replay.test("login")
    assert (t["status"], t["path"]) == ("passed", "replayed"), t
    assert t["reason"].startswith("replayed the recorded steps without the agent")
    assert [e["ok"] for e in t["expectations"]] == [True, True]
    assert calls(runs, runs.replay, "login") == []  # not one request: not the agent, not a judge
    assert t["usage"]["llm_calls"] == 0 and t["agent_report"] is None
    assert "final_screenshot" in t["artifacts"]  # fresh evidence from the replay's own browser


def test_a_replay_keeps_a_trace_of_its_playwright_actions_with_no_secret_in_it(runs: Runs) -> None:
    t = runs.replay.test("login")
    with zipfile.ZipFile(runs.replay.out / t["artifacts"]["trace"]) as z:
        entries = {name: z.read(name).decode("utf-8", errors="replace") for name in z.namelist()}
    events = [
        json.loads(line)
        for name, text in entries.items()
        if name.endswith(".trace")
        for line in text.splitlines()
        if line.strip()
    ]
    methods = {e.get("method") for e in events if e.get("type") == "before"}
    assert {"fill", "click"} <= methods, methods  # the replay's own actions, each with its DOM snapshots
    assert not [name for name, text in entries.items() if DEMO_PASSWORD in text]


def test_a_replay_with_an_output_schema_is_judged_by_one_call_on_the_final_page(runs: Runs) -> None:
    t = runs.replay.test("price")
    assert (t["status"], t["path"], t["reason"]) == ("passed", "replayed", "The page shows $19.99."), t
    assert [c["kind"] for c in calls(runs, runs.replay, "price")] == ["other"]  # one page check, no agent step
    assert t["expectations"] == [
        {"check": "data.price", "expected": '"$19.99"', "found": '"$19.99"', "ok": True, "timeout_s": None, "waited_s": None}
    ]  # a data check has nothing to wait for
    assert t["usage"]["llm_calls"] == 1


def test_a_replay_that_cannot_find_an_element_falls_back_to_the_agent(runs: Runs) -> None:
    t = runs.replay.test("button-moved")
    assert (t["status"], t["path"]) == ("passed", "replay-fell-back"), t
    assert calls(runs, runs.replay, "button-moved", "agent")  # the agent really ran again
    assert t["replay_drift"] == "replay drifted at step 1: input 'demo@acme.test' into textbox 'gone': element not found"
    assert t["reason"] == "Signed in."  # the verdict's reason stays the agent's


def test_a_replay_whose_expectation_fails_falls_back_and_its_new_trace_is_written_back(runs: Runs) -> None:
    t = runs.replay.test("typed-wrong")
    assert (t["status"], t["path"]) == ("passed", "replay-fell-back"), t
    entry = entries(runs.cache)["typed-wrong"]
    assert "nobody@acme.test" not in json.dumps(entry) and "demo@acme.test" in json.dumps(entry)


def test_a_test_that_failed_is_never_replayed(runs: Runs) -> None:
    t = runs.replay.test("fails")
    assert (t["status"], t["path"]) == ("failed", "agent")


def test_the_cache_holds_placeholders_yet_the_replay_typed_the_real_secret(runs: Runs) -> None:
    assert runs.replay.test("login")["status"] == "passed"  # the dashboard only opens with the real password
    text = "\n".join(p.read_text(encoding="utf-8") for p in runs.cache.glob("*.json"))
    assert DEMO_PASSWORD not in text and "<secret>pw</secret>" in text
    assert DEMO_PASSWORD not in runs.replay.all_output_text()
    assert all(DEMO_PASSWORD not in json.dumps(body) for body in runs.replay.llm.requests)  # type: ignore[union-attr]


def test_the_console_says_which_path_each_test_took(runs: Runs) -> None:
    assert "replayed" in runs.replay.stdout and "replay-fell-back" in runs.replay.stdout


def test_no_cache_runs_the_agent(runs: Runs) -> None:
    t = runs.no_cache.test("login")
    assert (t["status"], t["path"]) == ("passed", "agent")
    assert calls(runs, runs.no_cache, "login", "agent")
