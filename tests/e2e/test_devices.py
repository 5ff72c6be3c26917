"""End to end: a device per test. The fixture's /menu page hides its desktop links under 600 px wide and shows a menu
button instead, whose menu holds a link only phones get. Under `device: "iPhone 15"` the agent opens the menu and the
check on that link holds; the same test on the desktop fails its check. A second run replays the phone's recording
under the same device, and runs the agent afresh for a test recorded only under another one, saying why."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from PIL import Image

from preview_qa.manifest.devices import descriptors
from tests.conftest import CliRun, clean_env, scripted_run
from tests.site import DemoSite

pytestmark = pytest.mark.e2e

TASK = "[menu] Open the menu and check that it offers order tracking."
ENVIRONMENT = "Language de-DE, time zone Europe/Berlin, dark scheme"  # what /menu says of the browser it runs in
TESTS = {
    "phone": f"""
  - name: phone
    device: iPhone 15
    task: "{TASK}"
    expect: {{text: [Track your order, "{ENVIRONMENT}"]}}""",
    "desktop": """
  - name: desktop
    task: "[menu-desktop] Open the menu and check that it offers order tracking."
    expect: {text: Track your order}""",
    "other-phone": f"""
  - name: other-phone
    device: Pixel 7
    task: "{TASK}"
    expect: {{text: [Track your order, "{ENVIRONMENT}"]}}""",
}
HEAD = """
version: 1
defaults: {start: /menu, max_steps: 4, timeout: 120, locale: de-DE, timezone: Europe/Berlin, color_scheme: dark}
tests:"""
SCENARIOS = [
    {
        "match": "[menu]",
        "turns": [{"actions": [{"click": {"element": "Menu"}}]}, {"done": {"status": "pass", "reason": "Menu opened."}}],
    },
    {"match": "[menu-desktop]", "turns": [{"done": {"status": "pass", "reason": "I believe it does."}}]},
]


@dataclass
class Runs:
    first: CliRun
    second: CliRun


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runs]:
    env = clean_env()
    del env["PREVIEW_QA_NO_CACHE"]
    cache = str(tmp_path_factory.mktemp("cache"))
    done = []
    with DemoSite() as site:
        for folder, names in (("first", ("phone", "desktop")), ("second", ("phone", "other-phone"))):
            manifest = HEAD + "".join(TESTS[n] for n in names) + "\n"
            where = tmp_path_factory.mktemp(folder)
            with scripted_run(where, site, manifest, SCENARIOS, "--cache", cache, env=env) as run:
                done.append(run)
    yield Runs(*done)


def test_on_the_phone_the_agent_finds_the_menu_and_its_check_holds(runs: Runs) -> None:
    phone = runs.first.test("phone")
    assert phone["status"] == "passed", runs.first.stdout + runs.first.stderr
    assert phone["path"] == "agent"
    checks = {e["expected"]: e["ok"] for e in phone["expectations"]}
    assert checks == {"visible text 'Track your order'": True, f"visible text '{ENVIRONMENT}'": True}, checks
    assert phone["emulation"]["device"] == "iPhone 15" and phone["emulation"]["is_mobile"] is True
    assert phone["emulation"]["viewport"] == {"width": 393, "height": 659}


def test_the_same_page_on_the_desktop_fails_its_check(runs: Runs) -> None:
    desktop = runs.first.test("desktop")
    assert desktop["status"] == "failed"
    assert [e["ok"] for e in desktop["expectations"]] == [False]
    assert desktop["emulation"] == {
        "device": None,
        "viewport": None,
        "device_scale_factor": None,
        "is_mobile": None,
        "has_touch": None,
        "user_agent": None,
        "locale": "de-DE",
        "timezone": "Europe/Berlin",
        "color_scheme": "dark",
    }
    assert runs.first.exit_code == 1


def sizes(run: CliRun, name: str) -> set[tuple[int, int]]:
    """The sizes of every screenshot of the test (its steps', browser-use's or the replay's, and its final page's)."""
    found = set()
    for png in (run.out / run.test(name)["artifacts"]["events"]).parent.glob("*.png"):
        with Image.open(io.BytesIO(png.read_bytes())) as image:
            found.add(image.size)
    return found


def test_every_screenshot_is_the_devices_size(runs: Runs) -> None:
    assert sizes(runs.first, "phone") == sizes(runs.second, "phone") == {(393, 659)}  # the iPhone 15's, in CSS pixels
    assert sizes(runs.first, "desktop") == {(1280, 800)}


def test_the_recording_replays_under_its_device(runs: Runs) -> None:
    phone = runs.second.test("phone")
    assert (phone["status"], phone["path"]) == ("passed", "replayed"), runs.second.stdout + runs.second.stderr
    assert all(e["ok"] for e in phone["expectations"])


def test_another_device_runs_the_agent_and_says_why(runs: Runs) -> None:
    other = runs.second.test("other-phone")
    assert (other["status"], other["path"]) == ("passed", "agent"), runs.second.stdout + runs.second.stderr
    assert other["emulation"]["viewport"] == descriptors()["Pixel 7"]["viewport"]
    events = (runs.second.out / other["artifacts"]["events"]).read_text(encoding="utf-8").splitlines()
    said = [e["reason"] for e in map(json.loads, events) if e["type"] == "recording_not_replayed"]
    assert len(said) == 1 and said[0].startswith("recorded under iPhone 15, 393x659 at 3x, mobile, touch"), said
    assert runs.second.exit_code == 0
