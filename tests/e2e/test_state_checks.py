"""State checks and accessibility findings end to end (pages under /states/, tests/site/states.py): a dark-mode
switch, a checkbox and an expandable menu judged by `expect.element`, `expect.attribute` and `expect.css`, passing and
failing on the agent's run and on a replay (which, judged by them alone, makes no LLM call); the exported test asserts
the same states with Playwright's own assertions; a colour-contrast violation names every element, its ratio and its
colours in results.json and report.html."""

from __future__ import annotations

import html
import json
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from preview_qa.demo.scripted_llm import ScriptedLLM
from tests.conftest import CliRun, clean_env, preview_qa_run, run_in_process
from tests.e2e.exported import NO_PLAYWRIGHT_TEST, npx_run, playwright_test, pytest_run
from tests.site import DemoSite

pytestmark = pytest.mark.e2e

SAVED_STATES = """expect:
      element:
        - {role: switch, name: Dark mode, checked: true}
        - {role: checkbox, name: Email me updates, checked: true}
        - {role: button, name: Menu, expanded: true}
        - {role: button, name: Bold, pressed: false}
        - {role: button, name: Delete account, disabled: true}
        - {role: link, name: Profile, visible: true}
      attribute: [{selector: html, name: data-theme, value: dark}]
      css: [{selector: body, property: background-color, value: 'rgb(17, 17, 17)'}]"""
MANIFEST = f"""
version: 1
defaults: {{max_steps: 5, timeout: 120, expect: {{timeout: 2}}}}
tests:
  - name: settings saved
    start: /states/settings
    task: "[saved] Turn on dark mode and email updates, then open the menu."
    {SAVED_STATES}
  - name: switch lost on replay
    start: /states/settings
    task: "[lost] Turn on dark mode and email updates, then open the menu."
    heal: false
    {SAVED_STATES}
  - name: settings not saved
    start: /states/settings
    task: "[unsaved] Turn on dark mode."
    expect:
      element:
        - {{role: switch, name: Dark mode, checked: true}}
        - {{role: button, name: Menu, expanded: true}}
        - {{role: switch, name: Night mode, checked: true}}
        - {{role: link, name: Help}}
        - {{role: link, name: Profile, visible: false}}
      attribute: [{{selector: html, name: data-theme, value: dark}}]
      css: [{{selector: body, property: background-color, value: 'rgb(17, 17, 17)'}}]
  - name: contrast
    start: /states/docs
    task: "[contrast] Check the docs page is shown."
    expect: {{accessibility: {{}}}}
"""
CLICKS = [
    {"actions": [{"click": {"element": "Dark mode"}}]},
    {"actions": [{"click": {"element": "Email me updates"}}, {"click": {"element": "Menu"}}]},
]
PASS = {"done": {"status": "pass", "reason": "Done."}}
SCENARIOS = [
    {"name": "saved", "match": "[saved]", "turns": [*CLICKS, PASS]},
    {"name": "lost", "match": "[lost]", "turns": [*CLICKS, PASS]},
    {"name": "unsaved", "match": "[unsaved]", "turns": [PASS]},
    {"name": "contrast", "match": "[contrast]", "turns": [PASS]},
]


@dataclass
class Runs:
    record: CliRun
    replay: CliRun
    replay_calls: list[dict[str, Any]]  # the scripted LLM's requests during the replay
    manifest: Path
    cache: Path


def forget_the_switch(cache: Path, test: str) -> None:
    """As if the switch no longer answered its click: the replay waits where the agent clicked it."""
    for path in cache.glob("*.json"):
        entry = json.loads(path.read_text(encoding="utf-8"))
        if entry["test"] == test:
            for item in entry["history"]["history"]:
                clicked = [(e or {}).get("ax_name") for e in item["state"]["interacted_element"] or []]
                if clicked[:1] == ["Dark mode"]:
                    item["model_output"]["action"][0] = {"wait": {"seconds": 1}}
                    path.write_text(json.dumps(entry), encoding="utf-8")
                    return
    raise AssertionError(f"no recorded click on the switch in {test!r}")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, site: DemoSite) -> Iterator[Runs]:
    folder = tmp_path_factory.mktemp("states")
    manifest, cache = folder / "qa.yml", folder / "replay-cache"
    manifest.write_text(textwrap.dedent(MANIFEST), encoding="utf-8")
    env = clean_env()
    del env["PREVIEW_QA_NO_CACHE"]
    with ScriptedLLM(SCENARIOS) as llm:
        args = ("--cache", str(cache), "--concurrency", "2")
        record = preview_qa_run(manifest, site.url, folder / "record", llm, *args, env=env)
        forget_the_switch(cache, "switch lost on replay")
        first = len(llm.calls)
        only = ("--only", "settings saved", "--only", "switch lost on replay")
        replay = preview_qa_run(manifest, site.url, folder / "replay", llm, *args, *only, env=env)
        yield Runs(record, replay, llm.calls[first:], manifest, cache)


def checks(test: dict[str, Any]) -> list[tuple[str, str, bool, str]]:
    return [(e["check"], e["expected"], e["ok"], e["found"]) for e in test["expectations"]]


def test_states_that_hold_pass_the_agents_run(runs: Runs) -> None:
    assert runs.record.exit_code == 1, runs.record.stderr
    for name in ("settings saved", "switch lost on replay"):
        t = runs.record.test(name)
        assert (t["status"], t["path"]) == ("passed", "agent"), t
        assert checks(t) == [
            ("element", "switch 'Dark mode' checked", True, "it is checked"),
            ("element", "checkbox 'Email me updates' checked", True, "it is checked"),
            ("element", "button 'Menu' expanded", True, "it is expanded"),
            ("element", "button 'Bold' not pressed", True, "it is not pressed"),
            ("element", "button 'Delete account' disabled", True, "it is disabled"),
            ("element", "link 'Profile' visible", True, "it is visible"),
            ("attribute", "data-theme='dark' on 'html'", True, "it is 'dark'"),
            ("css", "CSS background-color 'rgb(17, 17, 17)' on 'body'", True, "it is 'rgb(17, 17, 17)'"),
        ]


def test_states_that_do_not_hold_fail_the_agents_pass_and_say_what_they_found(runs: Runs) -> None:
    t = runs.record.test("settings not saved")
    assert t["status"] == "failed", t
    assert checks(t) == [
        ("element", "switch 'Dark mode' checked", False, "checked is false"),
        ("element", "button 'Menu' expanded", False, "expanded is false"),
        (
            "element",
            "switch 'Night mode' checked",
            False,
            "no element with role switch named 'Night mode'; nearest: switch 'Dark mode'",
        ),
        (
            "element",
            "link 'Help' visible",
            False,
            "2 elements match (a check needs exactly one: give more of the name, or exact: true)",
        ),
        ("element", "no link 'Profile' visible", True, "none is visible"),
        ("attribute", "data-theme='dark' on 'html'", False, "it is 'light'"),
        ("css", "CSS background-color 'rgb(17, 17, 17)' on 'body'", False, "it is 'rgba(0, 0, 0, 0)'"),
    ]
    assert t["reason"].startswith(  # then how long it waited: 2 s less what settling took
        "expectation element failed: expected switch 'Dark mode' checked, found checked is false after waiting "
    )
    assert "the agent said pass: Done." in t["causes"]


def test_a_replay_runs_the_state_checks_alone_and_they_pass_with_no_llm_call(runs: Runs) -> None:
    t = runs.replay.test("settings saved")
    assert (t["status"], t["path"]) == ("passed", "replayed"), t
    assert t["reason"] == "replayed the recorded steps without the agent; all 8 expectation(s) hold on the final page"
    assert [e["ok"] for e in t["expectations"]] == [True] * 8
    assert t["usage"]["llm_calls"] == 0
    assert [c for c in runs.replay_calls if c["scenario"] == "saved"] == []


def test_a_replay_whose_state_no_longer_holds_fails_on_it(runs: Runs) -> None:
    t = runs.replay.test("switch lost on replay")
    assert (t["status"], t["path"]) == ("failed", "replayed"), t
    failed = [(e["expected"], e["found"]) for e in t["expectations"] if not e["ok"]]
    assert failed == [
        ("switch 'Dark mode' checked", "checked is false"),
        ("data-theme='dark' on 'html'", "it is 'light'"),
        ("CSS background-color 'rgb(17, 17, 17)' on 'body'", "it is 'rgba(0, 0, 0, 0)'"),
    ]
    assert t["reason"].startswith(
        "the replay did not pass (expectation element failed: expected switch 'Dark mode' checked, found checked is false"
    )
    assert [c for c in runs.replay_calls if c["scenario"] == "lost"] == []  # heal: false, so no agent either


def test_the_exported_test_asserts_the_same_states_with_playwrights_own_assertions(
    runs: Runs, site: DemoSite, tmp_path: Path
) -> None:
    done = run_in_process(
        ["export", str(runs.manifest), "--test", "settings saved", "--results", str(runs.record.out), "--lang", "python"],
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    source = (tmp_path / "test_settings_saved.py").read_text(encoding="utf-8")
    for line in (
        'expect(page.get_by_role("switch", name="Dark mode")).to_be_checked(timeout=2000)',
        'expect(page.get_by_role("button", name="Menu")).to_have_attribute("aria-expanded", "true", ignore_case=True, '
        "timeout=2000)",
        'expect(page.get_by_role("button", name="Bold", pressed=False)).to_have_count(1, timeout=2000)',
        'expect(page.get_by_role("button", name="Delete account")).to_be_disabled(timeout=2000)',
        'expect(page.locator("html")).to_have_attribute("data-theme", "dark", timeout=2000)',
        'expect(page.locator("body")).to_have_css("background-color", "rgb(17, 17, 17)", timeout=2000)',
    ):
        assert line in source, source
    ran = pytest_run(tmp_path, site.url)
    assert ran.returncode == 0 and "1 passed" in ran.stdout, ran.stdout + ran.stderr


def test_a_contrast_violation_names_every_element_its_ratio_and_its_colours(runs: Runs) -> None:
    t = runs.record.test("contrast")
    assert t["status"] == "failed", t
    [outcome] = t["expectations"]
    [violation] = outcome["violations"]
    assert (violation["rule"], violation["impact"], violation["counted"]) == ("color-contrast", "serious", True)
    elements = [
        (e["text"], e["data"]["contrastRatio"], e["data"]["fgColor"], e["data"]["bgColor"]) for e in violation["elements"]
    ]
    assert elements == [("Tutorial", 2.32, "#aaaaaa", "#ffffff"), ("Blog", 2.12, "#b2b2b2", "#ffffff")]
    assert all(e["data"]["expectedContrastRatio"] == "4.5:1" for e in violation["elements"])
    assert "color-contrast (serious) on 2 element(s), first " in t["reason"]
    assert "('Tutorial') [contrast 2.32:1, #aaaaaa on #ffffff, 12.0pt (16px) normal, 4.5:1 expected]" in t["reason"]
    report = html.unescape((runs.record.out / "report.html").read_text(encoding="utf-8"))
    for element in violation["elements"]:
        assert element["target"] in report
    assert "contrast 2.32:1, #aaaaaa on #ffffff, 12.0pt (16px) normal, 4.5:1 expected" in report
    assert "contrast 2.12:1, #b2b2b2 on #ffffff, 12.0pt (16px) normal, 4.5:1 expected" in report


def test_the_exported_typescript_spec_passes_likewise(runs: Runs, site: DemoSite, tmp_path: Path) -> None:
    project = playwright_test()
    if project is None:
        pytest.skip(NO_PLAYWRIGHT_TEST)
    done = run_in_process(
        ["export", str(runs.manifest), "--test", "settings saved", "--results", str(runs.record.out), "--lang", "ts"],
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    source = (tmp_path / "settings-saved.spec.ts").read_text(encoding="utf-8")
    assert 'await expect(page.getByRole("switch", { name: "Dark mode" })).toBeChecked({ timeout: 2000 });' in source
    ran = npx_run(project, tmp_path, site.url)
    assert ran.returncode == 0 and "1 passed" in ran.stdout, ran.stdout + ran.stderr
