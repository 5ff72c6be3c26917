"""End to end: expect.visual on fixture pages (tests/site/visual.py). The preview is the session's fixture site
(this pull request: a red button); the default branch is a second one serving the last release (a blue one). Against
--baseline-url, and against the reference a run on the default branch keeps in the replay cache: the same page gives
0.0%, the changed button is marked changed with a diff image and fails under --fail-on visual, a masked clock does not
count (an unmasked one does), steps: true names the step that changed (a test written as steps: each test step,
compared and labelled); and a page photographed 10 times gives the same pixels 10 times."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path
from xml.etree import ElementTree

import pytest
from PIL import Image

from preview_qa.demo.scripted_llm import ScriptedLLM
from preview_qa.verdict.checks.visual import compare
from tests.conftest import CliRun, clean_env, preview_qa_run, scripted_run
from tests.fakes.github import read_outputs, runner_env
from tests.site import DemoSite

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]

PASS = {"done": {"status": "pass", "reason": "Looks right."}}
NEXT = {"actions": [{"click": {"element": "Next"}}]}
SCENARIOS = [{"match": "[look]", "turns": [PASS]}, {"match": "[wizard]", "turns": [NEXT, NEXT, PASS]}]
MANIFEST = """
version: 1
defaults: {max_steps: 4, timeout: 90, expect: {timeout: 2, visual: {}}}
tests:
  - name: about unchanged
    start: /visual/about
    task: "[look] Check the about page."
    expect: {text: About Acme}
  - name: buy button
    start: /visual/shop
    task: "[look] Check the shop."
    expect: {text: Anvils}
  - name: masked clock
    start: /visual/clock
    task: "[look] Check the status."
    expect: {text: All systems normal, visual: {mask: ["#clock"]}}
  - name: unmasked clock
    start: /visual/clock
    task: "[look] Check the status."
    expect: {text: All systems normal, visual: {max_diff: 0}}
  - name: wizard
    start: /visual/wizard
    task: "[wizard] Go through the order to the payment."
    expect: {text: Payment, visual: {steps: true}}
  - name: wizard as steps
    start: /visual/wizard
    steps:
      - click: {role: button, name: Next}
        expect: {text: Shipping}
      - click: {role: button, name: Next}
        name: To the payment
        expect: {text: Payment}
    expect: {visual: {steps: true}}
"""


@pytest.fixture(scope="module")
def production() -> Iterator[DemoSite]:
    with DemoSite(production=True) as s:
        yield s


@pytest.fixture(scope="module")
def compared(tmp_path_factory: pytest.TempPathFactory, site: DemoSite, production: DemoSite) -> Iterator[CliRun]:
    folder = tmp_path_factory.mktemp("visual")
    extra = ("--baseline-url", production.url, "--fail-on", "visual", "--concurrency", "2")
    with scripted_run(folder, site, MANIFEST, SCENARIOS, *extra) as run:
        yield run


def _final(test: dict[str, object]) -> dict[str, object]:
    [final] = [v for v in test["visual"] if v["step"] == "final"]  # type: ignore[attr-defined]
    return final  # type: ignore[no-any-return]


def test_the_same_page_gives_zero_and_is_not_changed(compared: CliRun) -> None:
    t = compared.test("about unchanged")
    assert (t["status"], _final(t)["diff_ratio"], _final(t)["diff"]) == ("passed", 0.0, None), t
    assert t["changed"] is None and compared.results["totals"]["changed"] == 4  # the button, the clock, both wizards


def test_a_changed_button_is_marked_changed_with_a_diff_image_and_fails_under_fail_on_visual(compared: CliRun) -> None:
    t = compared.test("buy button")
    final = _final(t)
    assert t["status"] == "passed" and 0.001 < float(final["diff_ratio"]) < 0.05, t  # type: ignore[arg-type]
    sizes = set()
    for kind in ("diff", "before", "after"):
        with Image.open(compared.out / str(final[kind])) as image:
            sizes.add(image.size)
    assert len(sizes) == 1 and next(iter(sizes))[0] >= 800, sizes  # full size, not the shrunk artifact copies
    with Image.open(compared.out / str(final["diff"])) as diff:
        assert (255, 0, 0) in {c for _, c in diff.convert("RGB").getcolors(1 << 20) or []}  # the changed pixels, red
    assert str(t["changed"]).startswith("the page looks different from the default branch at the final page (")
    assert "changed: buy button: the page looks different" in compared.stdout, compared.stdout
    report = (compared.out / "report.html").read_text(encoding="utf-8")
    # The diff beside the default branch's and this PR's page, toggled by radio buttons and CSS: no script.
    assert (
        f'src="{final["diff"]}"' in report and f'src="{final["before"]}"' in report and report.count("<script") == 1
    )  # the filter's
    assert 'type="radio" class="after"' in report
    case = ElementTree.parse(compared.out / "junit.xml").find(".//testcase[@name='buy button']")
    assert case is not None
    assert {p.get("name"): p.get("value") for p in case.iterfind("properties/property")}["visual_changed"] == t["changed"]
    assert compared.exit_code == 1, compared.stdout + compared.stderr


def test_a_masked_clock_does_not_count_and_an_unmasked_one_does(compared: CliRun) -> None:
    assert _final(compared.test("masked clock"))["diff_ratio"] == 0.0
    unmasked = _final(compared.test("unmasked clock"))
    assert unmasked["over"] and float(unmasked["diff_ratio"]) > 0  # type: ignore[arg-type]


def test_steps_true_names_the_step_that_changed(compared: CliRun) -> None:
    t = compared.test("wizard")
    ratios = {v["step"]: v["diff_ratio"] for v in t["visual"]}
    assert ratios[1] == 0.0 and ratios[2] > 0.001 and ratios["final"] > 0.001, t["visual"]
    assert str(t["changed"]).startswith("the page looks different from the default branch at step 2 ("), t["changed"]


def test_steps_true_on_a_test_written_as_steps_compares_and_labels_each_test_step(compared: CliRun) -> None:
    t = compared.test("wizard as steps")
    assert (t["status"], t["usage"]["llm_calls"]) == ("passed", 0), t  # exact steps: no LLM, on the preview and baseline
    shots = {v["step"]: (v["label"], v["diff_ratio"]) for v in t["visual"]}
    assert shots.keys() == {1, 2, "final"}, t["visual"]
    assert shots[1] == ("step 1 of 2 \"Click button 'Next'\"", 0.0)  # the shipping page: the same
    assert shots[2][0] == "step 2 of 2 'To the payment'" and shots[2][1] > 0.001  # the payment page's button changed
    assert str(t["changed"]).startswith("the page looks different from the default branch at step 2 of 2 'To the payment' (")


def test_without_a_baseline_the_default_branchs_reference_in_the_cache_is_compared(
    tmp_path: Path, site: DemoSite, production: DemoSite
) -> None:
    manifest = tmp_path / "qa.yml"
    manifest.write_text(MANIFEST.split("  - name: masked clock")[0], encoding="utf-8")
    env = clean_env()
    del env["PREVIEW_QA_NO_CACHE"]
    for side in ("main", "pr"):  # each its own runner's temp folder (and event.json) beside its workspace
        (tmp_path / side / "workspace").mkdir(parents=True)
    on_main = runner_env(tmp_path / "main" / "workspace", event={"repository": {"default_branch": "main"}})
    on_main.update(GITHUB_EVENT_NAME="push", GITHUB_REF_NAME="main")
    cache = ("--cache", str(tmp_path / "cache"), "--no-comment")
    with ScriptedLLM(SCENARIOS) as llm:
        pr_env = {**env, **runner_env(tmp_path / "pr" / "workspace")}
        before = preview_qa_run(manifest, site.url, tmp_path / "out-pr-0", llm, *cache, env=pr_env)
        main = preview_qa_run(manifest, production.url, tmp_path / "out-main", llm, *cache, env={**env, **on_main})
        pr = preview_qa_run(manifest, site.url, tmp_path / "out-pr", llm, *cache, env=pr_env)
        accepted = preview_qa_run(
            manifest, site.url, tmp_path / "out-ok", llm, *cache, "--accept-visual", "buy button", "--fail-on", "visual", env=env
        )
    assert before.test("buy button")["visual"] == []  # a pull request's run keeps no reference: nothing to compare yet
    assert main.exit_code == 0 and main.results["totals"]["changed"] == 0, main.stdout + main.stderr
    assert pr.test("about unchanged")["visual"][0]["diff_ratio"] == 0.0
    assert pr.test("buy button")["visual"][0]["over"] and pr.exit_code == 0, pr.stdout  # not blocking by default
    summary = Path(pr_env["GITHUB_STEP_SUMMARY"]).read_text(encoding="utf-8")
    assert "**buy button**: the page looks different from the default branch at the final page (" in summary, summary
    assert "visual/final-diff.png` in [the run's artifacts](" in summary, summary  # the diff, by its path in the artifact
    assert read_outputs(Path(pr_env["GITHUB_OUTPUT"]))["changed"] == "1"
    # Accepted for this pull request: the difference is still shown, but the test is not changed and does not block.
    ok = accepted.test("buy button")
    assert ok["visual"][0]["over"] and ok["visual_accepted"] and ok["changed"] is None, ok
    assert accepted.exit_code == 0, accepted.stdout + accepted.stderr


def test_a_page_photographed_ten_times_gives_the_same_pixels(site: DemoSite) -> None:
    from playwright.async_api import async_playwright

    from preview_qa.agent.browsers.chromium import find_chromium
    from preview_qa.agent.evidence.comparison import comparison_shot
    from preview_qa.agent.guards.masking import Mask
    from preview_qa.manifest.models import VisualCheck
    from preview_qa.secrets.redact import Redactor

    async def shots() -> list[bytes]:
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=find_chromium(None, os.environ))
            taken = []
            for _ in range(10):  # each in a fresh context, as each test's run is
                context = await browser.new_context(viewport={"width": 1280, "height": 800})
                page = await context.new_page()
                await page.goto(site.url + "/visual/clock")
                mask = Mask(Redactor.of_tests({}))
                taken.append(await comparison_shot(page, mask, VisualCheck(mask=["#clock"]), 10))
                await context.close()
            await browser.close()
            return taken

    first, *others = asyncio.run(shots())
    assert [compare(first, other).differing for other in others] == [0] * 9
