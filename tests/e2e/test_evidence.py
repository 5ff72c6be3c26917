"""End to end: the evidence a reviewer gets from one real run (screenshots, events, GIF, report.html), checked in Chromium."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

import pytest
from PIL import Image

from preview_qa.agent.browsers.chromium import find_chromium
from preview_qa.reporters.output.images import FRAME_MS, LAST_FRAME_MS
from tests.conftest import CliRun, scripted_run
from tests.site import DemoSite

pytestmark = pytest.mark.e2e

HOSTILE_NAME = "Pricing <script>alert(1)</script> page"
MANIFEST = f"""
version: 1
defaults: {{max_steps: 4, timeout: 120}}
tests:
  - name: checkout throws
    start: /broken
    task: "[broken] Press Pay now and check that a confirmation appears."
    expect: {{text: ["Payment confirmed"]}}
  - name: provider answers HTTP 500
    start: /product
    task: "[http-500] Read the price."
    max_steps: 2  # each step's call is tried 3 times with the client's backoff: two show the error, four only wait
  - name: output is not JSON
    start: /product
    task: "[not-json] Read the price."
    max_steps: 2
  - name: "{HOSTILE_NAME}"
    start: /hostile
    task: "[hostile] Check that the plans are listed."
    expect: {{text: ["Team plan"]}}
  - name: leaves the site
    start: /external
    task: "[leave] Follow the link and report where it leads."
  - name: price is shown
    start: /product
    task: "[price] Check the price is shown."
"""

SCENARIOS = [
    {
        "match": "[broken]",
        "turns": [
            {"actions": [{"click": {"element": "Pay now"}}], "goal": "press Pay now"},
            {"actions": [{"wait": {"seconds": 1}}], "goal": "wait for a confirmation"},
            {"done": {"status": "fail", "reason": "No confirmation appeared."}},
        ],
    },
    {"match": "[http-500]", "turns": [{"http_status": 500}]},
    {"match": "[not-json]", "turns": [{"raw": "I think it passed!"}]},
    {
        "match": "[hostile]",
        "turns": [  # a real model quotes what it read, page markup included
            {"actions": [{"scroll": {"down": True}}], "goal": "read the title <script>alert(1)</script>"},
            {"done": {"status": "pass", "reason": "The page titled Pricing <script>alert(1)</script> lists the plans."}},
        ],
    },
    {
        "match": "[leave]",
        "turns": [
            {"actions": [{"click": {"element": "Leave site"}}], "goal": "follow the link"},
            {"done": {"status": "fail", "reason": "The link leads off the site."}},
        ],
    },
    {"match": "[price]", "turns": [{"done": {"status": "pass", "reason": "The price is $19.99."}}]},
]


@pytest.fixture(scope="module")
def evidence_run(tmp_path_factory: pytest.TempPathFactory, site: DemoSite) -> Iterator[CliRun]:
    with scripted_run(tmp_path_factory.mktemp("evidence"), site, MANIFEST, SCENARIOS, "--concurrency", "3", "--no-cache") as run:
        yield run


def events(run: CliRun, name: str) -> list[dict[str, Any]]:
    path = run.out / str(run.test(name)["artifacts"]["events"])
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def of_type(run: CliRun, name: str, kind: str) -> list[dict[str, Any]]:
    return [e for e in events(run, name) if e["type"] == kind]


def test_the_run_finished_with_every_test(evidence_run: CliRun) -> None:
    assert evidence_run.exit_code == 1, evidence_run.stderr
    assert len(evidence_run.results["tests"]) == 6


def test_a_page_that_throws_yields_error_events_counts_and_a_reason(evidence_run: CliRun) -> None:
    t = evidence_run.test("checkout throws")
    assert t["status"] == "failed"
    assert any("cart.total is undefined" in e["message"] for e in of_type(evidence_run, "checkout throws", "page_error"))
    assert any(e["text"] == "cart failed to load" for e in of_type(evidence_run, "checkout throws", "console_error"))
    assert any(
        e["url"].endswith("/api/cart") and e["status"] == 500 for e in of_type(evidence_run, "checkout throws", "failed_request")
    )
    ev = t["evidence"]
    assert ev["page_errors"] >= 1 and ev["console_errors"] >= 1 and ev["failed_requests"] >= 1
    assert "cart.total is undefined" in ev["first_page_error"]
    assert any("cart.total is undefined" in text for text in [t["reason"], *t["causes"]])


def test_a_provider_500_is_an_llm_error_event_and_still_leaves_screenshots(evidence_run: CliRun) -> None:
    t = evidence_run.test("provider answers HTTP 500")
    assert t["status"] == "errored"
    errors = of_type(evidence_run, "provider answers HTTP 500", "llm_error")
    assert errors and all(e["error"] is True and e["status"] == 500 and e["purpose"] == "agent" for e in errors)
    assert (evidence_run.out / t["artifacts"]["final_screenshot"]).is_file()
    assert t["artifacts"]["screenshots"]


def test_output_that_is_not_json_is_an_output_error_event(evidence_run: CliRun) -> None:
    errors = of_type(evidence_run, "output is not JSON", "output_error")
    assert errors and all(e["error"] is True and e["message"] == "not valid JSON" for e in errors)


def test_navigation_off_the_site_is_a_blocked_navigation_event(evidence_run: CliRun) -> None:
    blocked = of_type(evidence_run, "leaves the site", "navigation_blocked")
    assert blocked and blocked[0]["error"] is True and blocked[0]["host"] == "example.invalid"


def test_every_event_line_has_a_timestamp_a_type_and_an_error_flag(evidence_run: CliRun) -> None:
    for t in evidence_run.results["tests"]:
        lines = events(evidence_run, t["name"])
        assert lines, t["name"]
        for e in lines:
            assert e["ts"].endswith("+00:00") and isinstance(e["type"], str) and isinstance(e["error"], bool)
        assert lines[-1]["type"] == "verdict" and lines[-1]["status"] == t["status"]
        steps = [e for e in lines if e["type"] == "step"]
        assert [e["number"] for e in steps] == list(range(1, t["steps"] + 1))


def test_every_test_that_ran_a_step_has_screenshots_that_open(evidence_run: CliRun) -> None:
    for t in evidence_run.results["tests"]:
        assert t["steps"] >= 1, t["name"]
        shots = [*t["artifacts"].get("screenshots", []), t["artifacts"]["final_screenshot"]]
        for shot in shots:
            with Image.open(evidence_run.out / shot) as image:
                image.verify()
                assert image.format == "PNG"
        for path in [p for value in t["artifacts"].values() for p in ([value] if isinstance(value, str) else value)]:
            assert (evidence_run.out / path).is_file(), path


def test_a_multi_step_test_has_an_animation(evidence_run: CliRun) -> None:
    t = evidence_run.test("checkout throws")
    assert t["steps"] == 3
    with Image.open(evidence_run.out / t["artifacts"]["animation"]) as gif:
        assert gif.format == "GIF"
        shown_ms = 0
        for frame in range(gif.n_frames):  # Pillow merges identical frames and adds up their durations
            gif.seek(frame)
            shown_ms += gif.info["duration"]
    assert shown_ms == 3 * FRAME_MS + LAST_FRAME_MS  # three steps, then the final page held longer


def test_report_renders_in_chromium_with_the_evidence_and_no_injected_script(evidence_run: CliRun) -> None:
    from playwright.sync_api import expect, sync_playwright

    report = evidence_run.out / "report.html"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=find_chromium(None, os.environ))
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        dialogs: list[str] = []
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        requests: list[str] = []
        page.on("request", lambda r: requests.append(r.url))
        page.goto(report.as_uri())

        rows = page.locator("#summary tbody tr")
        assert rows.count() == 6
        statuses = [rows.nth(i).locator(".badge").inner_text().lower() for i in range(6)]
        assert statuses == ["errored", "failed", "failed", "failed", "passed", "passed"]  # worst first

        hostile = page.locator("details.test", has=page.get_by_role("heading", name=HOSTILE_NAME))
        assert hostile.locator("h2").inner_text() == HOSTILE_NAME
        hostile.locator("summary").click()  # a passed test starts folded
        # Playwright's expect waits for the unfolded text (an inner_text read at once found '' under load in CI once)
        expect(hostile.locator(".reason")).to_contain_text("Pricing <script>alert(1)</script> lists the plans")
        assert page.locator("script").count() == 1 and dialogs == []  # the filter's own script only: no page text ran

        broken = page.locator("details.test", has=page.get_by_role("heading", name="checkout throws"))
        assert "cart.total is undefined" in broken.locator("table.errors").inner_text()
        figures = broken.locator("figure.step")
        assert figures.count() == 3
        assert "press Pay now" in figures.nth(0).inner_text() and "Clicked button 'Pay now'" in figures.nth(0).inner_text()
        for i in range(3):
            image = figures.nth(i).locator("img")
            image.scroll_into_view_if_needed()
            page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=image.element_handle())
        assert "Payment confirmed" in broken.locator("table.expectations").inner_text()

        provider = page.locator("details.test", has=page.get_by_role("heading", name="provider answers HTTP 500"))
        assert "llm_error" in provider.locator("table.errors").inner_text()
        leaving = page.locator("details.test", has=page.get_by_role("heading", name="leaves the site"))
        assert "navigation_blocked" in leaving.locator("table.errors").inner_text()

        page.screenshot(path=str(evidence_run.out.parent / "report.png"), full_page=True)  # to look at by hand
        browser.close()
    assert all(url.startswith("file://") for url in requests)  # no network
