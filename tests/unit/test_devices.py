"""Devices and locale per test: Playwright's device list read offline, a device's options under the test's own keys
(and the defaults'), unknown names refused at file:line with the nearest ones, the context Playwright makes for it, and
a recording that replays only under the device it was recorded with."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import async_playwright

from preview_qa.agent.browsers.pool import context_options, environment
from preview_qa.agent.replay.environment import environment_gap
from preview_qa.engine.agent_port import AgentRequest, RecordedElsewhere, Recording
from preview_qa.engine.replay_cache import RecordingCache
from preview_qa.errors import ManifestError
from preview_qa.events import Observed
from preview_qa.manifest import loader
from preview_qa.manifest.devices import descriptors, emulation, nearest
from preview_qa.manifest.models import Manifest, TestSpec
from preview_qa.results import Emulation, Viewport
from tests.builders import PASS, run, spec

IPHONE = {"width": 393, "height": 659}
HISTORY = {"history": [{"model_output": {"action": [{"navigate": {"url": "http://preview:1/menu"}}]}}]}


def load(test: str, defaults: str = "") -> TestSpec:
    return loader.loads(f"version: 1\n{defaults}tests:\n  - name: a\n    task: t\n{test}", "qa.yml").tests[0]


def refused(test: str, defaults: str = "") -> str:
    with pytest.raises(ManifestError) as e:
        load(test, defaults)
    return str(e.value)


def test_the_device_list_is_playwrights_own() -> None:
    async def from_the_driver() -> dict[str, Any]:
        async with async_playwright() as p:
            return dict(p.devices)

    theirs = asyncio.run(from_the_driver())
    ours = descriptors()
    assert sorted(ours) == sorted(theirs) and len(ours) > 100
    for name, device in theirs.items():
        assert ours[name]["viewport"] == device["viewport"], name
        assert ours[name]["userAgent"] == device["user_agent"], name
        assert (ours[name]["deviceScaleFactor"], ours[name]["isMobile"], ours[name]["hasTouch"]) == (
            device["device_scale_factor"],
            device["is_mobile"],
            device["has_touch"],
        ), name


def test_a_device_brings_its_viewport_scale_touch_and_user_agent() -> None:
    test = load("    device: iPhone 15\n")
    assert test.emulation is not None
    assert test.emulation.viewport == Viewport(**IPHONE)
    assert (test.emulation.device_scale_factor, test.emulation.is_mobile, test.emulation.has_touch) == (3, True, True)
    assert "iPhone" in (test.emulation.user_agent or "")
    assert test.emulation.label() == "iPhone 15, 393x659 at 3x, mobile, touch"


def test_the_tests_own_keys_replace_the_devices() -> None:
    test = load("    device: iPhone 15\n    viewport: {width: 500, height: 900}\n    color_scheme: dark\n")
    assert test.emulation is not None
    assert test.emulation.viewport == Viewport(width=500, height=900)
    assert test.emulation.device_scale_factor == 3 and test.emulation.color_scheme == "dark"


def test_defaults_apply_and_a_test_opts_out_with_null() -> None:
    defaults = "defaults: {device: Pixel 7, locale: de-DE, timezone: Europe/Berlin}\n"
    assert load("", defaults).emulation == emulation("Pixel 7", locale="de-DE", timezone="Europe/Berlin")
    own = load("    device: null\n", defaults).emulation
    assert own == Emulation(locale="de-DE", timezone="Europe/Berlin")  # the default desktop, in German
    assert load("").emulation is None


@pytest.mark.parametrize(
    ("test", "message"),
    [
        ("    device: iphone 51\n", "qa.yml:5: tests[0].device: unknown device 'iphone 51'; did you mean 'iPhone"),
        ("    device: Pixle 7\n", "qa.yml:5: tests[0].device: unknown device 'Pixle 7'; did you mean 'Pixel 7'"),
        ("    device: Commodore\n", "see Playwright's device list (e.g. 'iPhone 15'"),
        (
            "    timezone: Europe/Berln\n",
            "qa.yml:5: tests[0].timezone: unknown timezone 'Europe/Berln'; did you mean 'Europe/Berlin'",
        ),
        ("    locale: de DE\n", "qa.yml:5: tests[0].locale: a locale is a language tag such as en, de-DE"),
        ("    color_scheme: black\n", "qa.yml:5: tests[0].color_scheme: input should be 'light', 'dark' or 'no-preference'"),
        ("    viewport: {width: 0, height: 800}\n", "qa.yml:5: tests[0].viewport.width: input should be greater than"),
        ("    viewport: {width: 400}\n", "qa.yml:5: tests[0].viewport.height: this required key is missing."),
    ],
)
def test_bad_values_are_refused_at_their_key(test: str, message: str) -> None:
    assert message in refused(test)


def test_a_bad_default_is_refused_at_defaults() -> None:
    assert refused("", "defaults: {device: iPhone 99}\n").startswith("qa.yml:2: defaults.device: unknown device 'iPhone 99'")


def test_nearest_names_ignore_case() -> None:
    assert nearest("ipad mini", ["iPad Mini", "iPad Pro 11", "Pixel 7"])[0] == "iPad Mini"


def test_the_context_playwright_makes() -> None:
    desktop = {"width": 1280, "height": 800}  # always a viewport: without one, the page is the window less its frame
    assert context_options(None) == {"viewport": desktop}
    assert context_options(Emulation(locale="de-DE", timezone="Europe/Berlin")) == {
        "viewport": desktop,
        "locale": "de-DE",
        "timezone_id": "Europe/Berlin",
    }
    phone = context_options(load("    device: iPhone 15\n    color_scheme: no-preference\n").emulation)
    assert {k: v for k, v in phone.items() if k != "user_agent"} == {
        "viewport": IPHONE,
        "device_scale_factor": 3,
        "is_mobile": True,
        "has_touch": True,
        "color_scheme": "no-preference",
    }


def test_a_replay_is_made_as_its_recordings_pages_saw_it() -> None:
    recorded = environment(None, ("Mozilla/5.0 Recorded/1.0", "fr-FR"))
    assert recorded == Emulation(
        viewport=Viewport(width=1280, height=800),
        device_scale_factor=1.0,
        is_mobile=False,
        has_touch=False,
        user_agent="Mozilla/5.0 Recorded/1.0",
        locale="fr-FR",
    )
    assert context_options(recorded) == {
        "viewport": {"width": 1280, "height": 800},
        "device_scale_factor": 1.0,
        "is_mobile": False,
        "has_touch": False,
        "user_agent": "Mozilla/5.0 Recorded/1.0",
        "locale": "fr-FR",
    }
    # What a context made for it shows is what was recorded; the default desktop's context shows the browser's own.
    assert environment(recorded, ("Mozilla/5.0 Recorded/1.0", "fr-FR")) == recorded
    own, same = ("Mozilla/5.0 Chrome/156", "en-US"), ("Mozilla/5.0 Recorded/1.0", "fr-FR")
    assert environment(recorded, own) != environment(None, own)  # a fresh context, made with the recording's
    assert environment(recorded, same) == environment(None, same)  # the next test's context, made already, serves


def cache_of(tmp_path: Path, test: TestSpec) -> RecordingCache:
    return RecordingCache(tmp_path, Manifest(version=1, tests=[test]), "openai", "gpt-x")


def test_a_recording_replays_only_under_its_device(tmp_path: Path) -> None:
    phone, desktop = load("    device: iPhone 15\n"), load("")
    cache = cache_of(tmp_path, phone)
    assert cache.key(phone).startswith(cache.key(desktop) + ".")  # a test without a device keeps its earlier key
    cache.store(phone, "http://preview:1", HISTORY)
    assert isinstance(cache.lookup(phone), Recording)
    assert cache.load(desktop) is None  # `export --cache` too finds only the desktop's own recording
    assert cache.lookup(desktop) == RecordedElsewhere("iPhone 15, 393x659 at 3x, mobile, touch")
    assert cache.lookup(load("    device: Pixel 7\n")) == RecordedElsewhere("iPhone 15, 393x659 at 3x, mobile, touch")
    other_task = TestSpec(name="a", task="another", device="iPhone 15")
    assert cache.lookup(other_task) is None
    assert json.loads(cache.path(phone).read_text())["emulation"]["device"] == "iPhone 15"


def test_a_recording_of_an_earlier_version_is_the_desktops(tmp_path: Path) -> None:
    desktop = load("")
    cache = cache_of(tmp_path, desktop)
    cache.store(desktop, "http://preview:1", HISTORY)
    entry = json.loads(cache.path(desktop).read_text())
    del entry["emulation"]
    cache.path(desktop).write_text(json.dumps(entry))
    assert cache.lookup(load("    locale: fr-FR\n")) == RecordedElsewhere("the default desktop (1280x800)")


def test_the_runner_runs_the_agent_and_says_why_and_reports_the_device() -> None:
    replays = []

    async def agent(request: AgentRequest) -> Any:
        from preview_qa.verdict.agent_run import AgentRun

        replays.append(request.recording)
        return AgentRun(done=PASS)

    test = spec(device="Pixel 7")
    result, events = run([test], agent, recordings=lambda s, target="preview": RecordedElsewhere("the default desktop"))
    assert replays == [None] and result.tests[0].status == "passed"
    said = [e.detail["reason"] for e in events if isinstance(e, Observed) and e.kind == "recording_not_replayed"]
    assert said == [
        "recorded under the default desktop, not under this test's Pixel 7, 412x839 at 2.625x, mobile, touch: "
        "the agent runs it afresh"
    ]
    assert result.tests[0].emulation == test.emulation


def test_a_replay_says_why_its_browser_may_not_match_the_recordings() -> None:
    live = environment(None, ("Mozilla/5.0 Chrome/156", "en-US"))
    recorded = live.model_copy(update={"locale": "fr-FR"})
    assert environment_gap(None, live) is None  # the agent's own run
    assert environment_gap(Recording("http://p", {}, environment=live), live) is None
    assert environment_gap(Recording("http://p", {}, environment=recorded), live) == (
        "the replay's browser differs from the recording's in locale (fr-FR recorded, en-US now)"
    )
    assert environment_gap(Recording("http://p", {}), live) == (
        "the recording kept no viewport, user agent or locale (an earlier version made it): replayed as 1280x800, "
        "locale en-US, with this browser's user agent; a run with --no-cache records them afresh"
    )
