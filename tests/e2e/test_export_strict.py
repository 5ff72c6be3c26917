"""Exports run under Playwright's strict mode: on a page whose elements have twins of the same role and name
(tests/site/twins.py: a link in the navbar and the footer, a button in each of two cards, a copy button on
each line), the agent uses the second of each; the run records how the export's locator finds it (on the agent's path
and on a replay), and the exported tests scope it — by the footer landmark, the card's test id, or its place — and pass
under pytest-playwright (and @playwright/test where it is installed), where the unscoped locator stops the test."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CliRun, clean_env, run_in_process, scripted_run
from tests.e2e.exported import NO_PLAYWRIGHT_TEST, npx_run, playwright_test, pytest_run
from tests.site import DemoSite

pytestmark = pytest.mark.e2e

TWINS = """version: 1
defaults: {max_steps: 4, timeout: 90}
tests:
  - name: footer tutorial
    task: "[footer] Open the tutorial from the footer."
    start: /twins/
    expect: {url: /twins/tutorial, text: Opened from the footer}
  - name: pro plan
    task: "[pro] Choose the Pro plan."
    start: /twins/
    expect: {text: You chose Pro}
  - name: copy start
    task: "[copy] Copy npm start."
    start: /twins/
    expect: {text: "Copied: npm start"}
"""
DONE = {"done": {"status": "pass", "reason": "It worked."}}
CLICKS = {"footer": "footer-tutorial", "pro": "choose-pro", "copy": "copy-start"}  # each twin's id, for the script
FILES = {"footer tutorial": "footer_tutorial", "pro plan": "pro_plan", "copy start": "copy_start"}
TUTORIAL = 'get_by_role("link", name="Tutorial", exact=True)'
SCOPED = {  # what each exported test clicks
    "footer tutorial": f'page.get_by_role("contentinfo").{TUTORIAL}.click()',
    "pro plan": 'page.get_by_test_id("plan-pro").get_by_role("button", name="Choose", exact=True).click()',
    "copy start": 'page.get_by_role("button", name="Copy", exact=True).nth(1).click()',
}
FOOTER_LINK = {
    "by": "role",
    "value": "link",
    "name": "Tutorial",
    "matches": 2,
    "nth": 1,
    "within": {"by": "role", "value": "contentinfo", "name": None},
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, site: DemoSite) -> Iterator[dict[str, CliRun]]:
    """The agent's run, recorded into a cache, then the same tests replayed from it."""
    folder = tmp_path_factory.mktemp("twins")
    env = clean_env()
    del env["PREVIEW_QA_NO_CACHE"]
    scenarios = [{"match": f"[{k}]", "turns": [{"actions": [{"click": {"element": v}}]}, DONE]} for k, v in CLICKS.items()]
    done = {}
    for path, script in (("agent", scenarios), ("replay", [])):
        (folder / path).mkdir()
        with scripted_run(folder / path, site, TWINS, script, "--cache", str(folder / "cache"), env=env) as run:
            assert run.exit_code == 0, run.stdout + run.stderr
            done[path] = run
    yield done


def _clicked(run: CliRun, name: str) -> dict[str, Any]:
    """The element the test's click acted on, as its step's event tells it."""
    events = (run.out / run.test(name)["artifacts"]["events"]).read_text(encoding="utf-8").splitlines()
    steps = [json.loads(line) for line in events if json.loads(line)["type"] == "step"]
    return next(e for s in steps for a, e in zip(s["actions"], s["elements"], strict=True) if "click" in a)


def test_both_paths_record_how_the_locator_finds_the_element(runs: dict[str, CliRun]) -> None:
    for run in runs.values():
        assert _clicked(run, "footer tutorial")["locator"] == FOOTER_LINK
        pro = _clicked(run, "pro plan")["locator"]
        assert (pro["matches"], pro["nth"], pro["within"]) == (
            2,
            1,
            {"by": "test_id", "value": "plan-pro", "name": "data-testid"},
        )
        copy = _clicked(run, "copy start")["locator"]
        assert (copy["matches"], copy["nth"], copy["within"]) == (2, 1, None)
    assert all(t["path"] == "replayed" for t in runs["replay"].results["tests"]), runs["replay"].results


def _export(run: CliRun, folder: Path, lang: str, source: list[str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name in FILES:
        done = run_in_process(["export", str(run.out.parent / "qa.yml"), "--test", name, *source, "--lang", lang], cwd=folder)
        assert done.returncode == 0, done.stderr
    return folder


@pytest.fixture(scope="module")
def exported(runs: dict[str, CliRun], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each test exported from the agent's results folder, in both languages, and in Python from the cache too."""
    agent, folder = runs["agent"], tmp_path_factory.mktemp("exported")
    cache = ["--cache", str(agent.out.parent.parent / "cache"), "--provider", "openai", "--model", "scripted"]
    return {
        "python": _export(agent, folder / "python", "python", ["--results", str(agent.out)]),
        "ts": _export(agent, folder / "ts", "ts", ["--results", str(agent.out)]),
        "cache": _export(agent, folder / "cache", "python", cache),
    }


def test_the_exported_locators_are_scoped_as_the_run_found_them(exported: dict[str, Path]) -> None:
    for name, stem in FILES.items():
        source = (exported["python"] / f"test_{stem}.py").read_text(encoding="utf-8")
        assert SCOPED[name] in source, source
        assert (exported["cache"] / f"test_{stem}.py").read_text(encoding="utf-8") == source
    spec = (exported["ts"] / "footer-tutorial.spec.ts").read_text(encoding="utf-8")
    assert 'page.getByRole("contentinfo").getByRole("link", { name: "Tutorial", exact: true }).click()' in spec, spec


def test_the_exported_tests_pass_under_strict_mode(exported: dict[str, Path], site: DemoSite) -> None:
    done = pytest_run(exported["python"], site.url)
    assert done.returncode == 0 and "3 passed" in done.stdout, done.stdout + done.stderr


def test_the_unscoped_locator_is_what_strict_mode_stops(exported: dict[str, Path], site: DemoSite, tmp_path: Path) -> None:
    """The control: the same footer test with the locator as export wrote it before stops on the twin links."""
    source = (exported["python"] / "test_footer_tutorial.py").read_text(encoding="utf-8")
    (tmp_path / "test_footer_tutorial.py").write_text(source.replace('page.get_by_role("contentinfo").', "page."), "utf-8")
    done = pytest_run(tmp_path, site.url)
    assert done.returncode == 1 and "strict mode violation" in done.stdout, done.stdout + done.stderr


def test_the_exported_specs_pass_under_playwright_test(exported: dict[str, Path], site: DemoSite) -> None:
    project = playwright_test()
    if project is None:
        pytest.skip(NO_PLAYWRIGHT_TEST)
    done = npx_run(project, exported["ts"], site.url)
    assert done.returncode == 0 and "3 passed" in done.stdout, done.stdout + done.stderr
