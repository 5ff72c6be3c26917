"""End to end: a replay sees what the agent saw. The fixture's /viewport page shows its innerWidth x innerHeight and
scale as text; the same check on it holds on the agent's run and on its replay, on the default desktop (1280x800, as
the docs promise, on every Chromium build) and under a device, and both paths send the same user agent. A recording
keeps what its pages saw; a replay runs with the recording's user agent and locale, and one of a recording that kept
none (an earlier version's) still replays at 1280x800 and says why it may differ."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CliRun, clean_env, scripted_run
from tests.site import DemoSite

pytestmark = pytest.mark.e2e

DESKTOP = "Viewport 1280 x 800 at 1"
PHONE = "Viewport 393 x 659 at 3"  # the iPhone 15's, in CSS pixels
MANIFEST = f"""
version: 1
defaults: {{max_steps: 4, timeout: 120}}
tests:
  - name: desktop
    start: /viewport?t=desktop
    task: "[viewport] Check that the page shows its size."
    expect: {{text: ["{DESKTOP}"]}}
  - name: phone
    device: iPhone 15
    start: /viewport?t=phone
    task: "[viewport] Check that the page shows its size."
    expect: {{text: ["{PHONE}"]}}
"""
SCENARIOS = [
    {
        "match": "[viewport]",
        "turns": [{"actions": [{"scroll": {"down": True}}]}, {"done": {"status": "pass", "reason": "It does."}}],
    }
]
DESKTOP_SIZE, PHONE_SIZE = {"width": 1280, "height": 800}, {"width": 393, "height": 659}
RECORDED_ELSEWHERE = {"user_agent": "Mozilla/5.0 (iPhone) RecordedElsewhere/1.0", "locale": "fr-FR"}


@dataclass
class Runs:
    record: CliRun
    replay: CliRun
    edited: CliRun  # after the desktop's entry lost its environment and the phone's was recorded on another browser
    entries: dict[str, dict[str, Any]]  # by test name, as the agent's run filed them
    headers: list[dict[str, dict[str, str]]]  # per run: each test's request for its start page, by test name


def start_page_headers(site: DemoSite, since: int) -> dict[str, dict[str, str]]:
    return {path.split("t=")[1]: headers for _, path, headers in site.header_log[since:] if path.startswith("/viewport?t=")}


def cache_entries(cache: Path) -> dict[str, Path]:
    return {json.loads(p.read_text(encoding="utf-8"))["test"]: p for p in cache.glob("*.json")}


def edit(path: Path, environment: dict[str, Any] | None) -> None:
    entry = json.loads(path.read_text(encoding="utf-8"))
    entry["environment"] = environment
    path.write_text(json.dumps(entry), encoding="utf-8")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runs]:
    env = clean_env()
    del env["PREVIEW_QA_NO_CACHE"]
    cache = tmp_path_factory.mktemp("cache")
    done, headers, entries = [], [], {}
    with DemoSite() as site:
        for folder in ("record", "replay", "edited"):
            if folder == "replay":
                entries = {name: json.loads(p.read_text(encoding="utf-8")) for name, p in cache_entries(cache).items()}
            if folder == "edited":
                paths = cache_entries(cache)
                edit(paths["desktop"], None)
                edit(paths["phone"], {**entries["phone"]["environment"], **RECORDED_ELSEWHERE})
            since = len(site.header_log)
            where = tmp_path_factory.mktemp(folder)
            with scripted_run(where, site, MANIFEST, SCENARIOS, "--cache", str(cache), env=env) as run:
                done.append(run)
            headers.append(start_page_headers(site, since))
    yield Runs(*done, entries, headers)


@pytest.mark.parametrize("name", ["desktop", "phone"])
def test_the_agent_and_its_replay_see_the_same_viewport(runs: Runs, name: str) -> None:
    agent, replay = runs.record.test(name), runs.replay.test(name)
    assert (agent["status"], agent["path"]) == ("passed", "agent"), runs.record.stdout + runs.record.stderr
    assert (replay["status"], replay["path"]) == ("passed", "replayed"), runs.replay.stdout + runs.replay.stderr
    assert replay["usage"]["llm_calls"] == 0  # the page check decided, by code
    assert f"{name} (" in runs.replay.stdout and ", replayed (0 LLM calls)): " in runs.replay.stdout
    # The same check, holding on both paths: innerWidth x innerHeight (and the scale) equal.
    assert [(e["expected"], e["ok"]) for e in agent["expectations"]] == [(e["expected"], e["ok"]) for e in replay["expectations"]]
    assert all(e["ok"] for e in replay["expectations"])
    seen = {run: runs.headers[run][name]["User-Agent"] for run in (0, 1)}
    assert seen[0] == seen[1], seen


def test_a_recording_keeps_what_its_pages_saw(runs: Runs) -> None:
    desktop, phone = runs.entries["desktop"]["environment"], runs.entries["phone"]["environment"]
    assert (desktop["viewport"], desktop["device_scale_factor"], desktop["is_mobile"]) == (DESKTOP_SIZE, 1, False)
    assert (phone["viewport"], phone["device_scale_factor"], phone["is_mobile"]) == (PHONE_SIZE, 3, True)
    assert desktop["user_agent"] == runs.headers[0]["desktop"]["User-Agent"]
    assert phone["user_agent"] == runs.headers[0]["phone"]["User-Agent"] and "iPhone" in phone["user_agent"]
    assert desktop["locale"] and phone["locale"]


def test_a_replay_runs_with_the_recordings_user_agent_and_locale(runs: Runs) -> None:
    phone = runs.edited.test("phone")
    assert (phone["status"], phone["path"]) == ("passed", "replayed"), runs.edited.stdout + runs.edited.stderr
    sent = runs.headers[2]["phone"]
    assert (sent["User-Agent"], sent["Accept-Language"]) == (RECORDED_ELSEWHERE["user_agent"], "fr-FR")
    assert "replay_environment" not in events_of(runs.edited, "phone")  # it matched what was recorded


def test_a_recording_that_kept_no_environment_replays_on_the_desktop_and_says_why(runs: Runs) -> None:
    desktop = runs.edited.test("desktop")
    assert (desktop["status"], desktop["path"]) == ("passed", "replayed"), runs.edited.stdout + runs.edited.stderr
    assert all(e["ok"] for e in desktop["expectations"])  # still 1280x800
    [said] = events_of(runs.edited, "desktop")["replay_environment"]
    assert said.startswith(
        "the recording kept no viewport, user agent or locale (an earlier version made it): replayed as 1280x800"
    ), said
    assert said.endswith("a run with --no-cache records them afresh")


def events_of(run: CliRun, name: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for line in (run.out / run.test(name)["artifacts"]["events"]).read_text(encoding="utf-8").splitlines():
        event = json.loads(line)
        found.setdefault(event["type"], []).append(str(event.get("reason", "")))
    return found
