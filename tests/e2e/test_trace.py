"""A Playwright trace per test, end to end: kept for failed tests (retain-on-failure), listing each agent step as a
group, with no secret in any entry, and opened by `playwright show-trace`."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from preview_qa.secrets.redact import base64_forms, forms
from tests.conftest import DEMO_PASSWORD, CliRun, scripted_run
from tests.site import DemoSite

pytestmark = pytest.mark.e2e

MANIFEST = """
version: 1
defaults: {max_steps: 4, timeout: 120}
tests:
  - name: login then a wrong page
    start: /login
    task: "[login] Log in with password <secret>pw</secret>."
    secrets: {pw: DEMO_PASSWORD}
    expect: {url: /nowhere}
  - name: price is wrong
    start: /product
    task: "[price-fail] Check the price is $9.99."
  - name: price is right
    start: /product
    task: "[price-pass] Check the price is $19.99."
"""
SCENARIOS = [
    {
        "match": "[login]",
        "turns": [
            {
                "actions": [
                    {"input": {"element": "Email", "text": "demo@acme.test"}},
                    {"input": {"element": "Password", "text": "<secret>pw</secret>"}},
                ]
            },
            {"actions": [{"click": {"element": "Log in"}}]},
            {"done": {"status": "pass", "reason": "Logged in."}},
        ],
    },
    {
        "match": "[price-fail]",
        "turns": [{"actions": [{"scroll": {"down": True}}]}, {"done": {"status": "fail", "reason": "The price is $19.99."}}],
    },
    {"match": "[price-pass]", "turns": [{"done": {"status": "pass", "reason": "The price is $19.99."}}]},
]


@pytest.fixture(scope="module")
def traced_run(tmp_path_factory: pytest.TempPathFactory, site: DemoSite) -> Iterator[CliRun]:
    every = ("--concurrency", "2", "--trace", "retain-on-failure")  # the product's default, which clean_env turns off
    with scripted_run(tmp_path_factory.mktemp("trace"), site, MANIFEST, SCENARIOS, *every) as run:
        yield run


def trace_of(run: CliRun, name: str) -> Path:
    return run.out / run.test(name)["artifacts"]["trace"]


def trace_events(path: Path) -> list[dict]:
    with zipfile.ZipFile(path) as z:
        return [json.loads(line) for n in z.namelist() if n.endswith(".trace") for line in z.read(n).splitlines() if line.strip()]


def test_failed_tests_keep_a_trace_and_a_passing_one_does_not(traced_run: CliRun) -> None:
    assert traced_run.exit_code == 1, traced_run.stderr
    assert traced_run.test("login then a wrong page")["status"] == "failed"
    assert traced_run.test("price is wrong")["status"] == "failed"
    assert trace_of(traced_run, "price is wrong").is_file()
    passed = traced_run.test("price is right")
    assert passed["status"] == "passed" and "trace" not in passed["artifacts"]
    report = (traced_run.out / "report.html").read_text(encoding="utf-8")
    assert f'<a href="{traced_run.test("price is wrong")["artifacts"]["trace"]}">trace.zip</a>' in report


def test_the_trace_lists_each_agent_step_as_a_group_then_the_checks(traced_run: CliRun) -> None:
    events = trace_events(trace_of(traced_run, "price is wrong"))
    groups = [e.get("title") for e in events if e.get("type") == "before" and e.get("method") == "tracingGroup"]
    assert groups == ["agent step 1", "agent step 2", "expectation checks"], sorted({e.get("method") for e in events})


def test_the_film_strip_is_the_tests_own_pictures_at_the_moments_they_were_taken(traced_run: CliRun) -> None:
    """No screencast is recorded (a third of an agent run's CPU): the trace's frames are the step pictures and the
    final page the test's folder holds, in the order taken, within the trace's own span."""
    path = trace_of(traced_run, "price is wrong")
    events = trace_events(path)
    frames = [e for e in events if e.get("type") == "screencast-frame"]
    pictures = sorted(p.name for p in path.parent.glob("*.png"))
    assert pictures == ["final.png", "step-01.png", "step-02.png"] and len(frames) == len(pictures), (pictures, frames)
    times = [f["timestamp"] for f in frames]
    spans = [e["startTime"] for e in events if e.get("type") == "before"] + [
        e["endTime"] for e in events if e.get("type") == "after"
    ]
    assert times == sorted(times) and min(spans) <= times[0] and times[-1] <= max(spans) + 1000, (times, min(spans), max(spans))
    with zipfile.ZipFile(path) as z:
        assert all(z.read(f["file"]).startswith(b"\xff\xd8") for f in frames)  # JPEG, as the viewer's own frames


def test_no_secret_in_the_trace_raw_encoded_or_in_pictures(traced_run: CliRun) -> None:
    path = trace_of(traced_run, "login then a wrong page")
    events = trace_events(path)
    assert [e.get("title") for e in events if e.get("method") == "tracingGroup" and e.get("type") == "before"][:3] == [
        "agent step 1",
        "agent step 2",
        "agent step 3",
    ]
    assert not any(e.get("type") == "screencast-frame" for e in events)  # no pixels of a test with secrets
    leaks = set(forms(DEMO_PASSWORD)) | set(base64_forms(DEMO_PASSWORD))
    with zipfile.ZipFile(path) as z:
        assert not [n for n in z.namelist() if n.endswith((".jpeg", ".jpg", ".png"))]
        for name in z.namelist():
            body = z.read(name).decode("utf-8", errors="replace")
            found = [f for f in leaks if f in body]
            assert not found, (name, found)
        assert any("<secret>pw</secret>" in z.read(n).decode("utf-8", errors="replace") for n in z.namelist())


def test_playwright_show_trace_opens_it_and_lists_the_steps(traced_run: CliRun, tmp_path: Path) -> None:
    """The viewer the playwright package ships, served on 127.0.0.1 and read in Debian's Chromium (bounded waits)."""
    from playwright.sync_api import sync_playwright

    from preview_qa.agent.browsers.chromium import find_chromium

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    viewer = subprocess.Popen(
        [
            str(Path(sys.executable).parent / "playwright"),
            "show-trace",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            str(trace_of(traced_run, "price is wrong")),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # the `playwright` script runs the viewer in a node child: both go at the end
    )
    try:
        assert viewer.stdout is not None
        line = ""
        for _ in range(5):  # "Listening on http://127.0.0.1:PORT", after a blank line
            line = viewer.stdout.readline()
            if "http://" in line or not line:
                break
        url = line.split()[-1] if line.split() else ""
        assert url.startswith(f"http://127.0.0.1:{port}"), line
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=find_chromium(None, os.environ))
            page = browser.new_page()
            page.goto(url, timeout=30_000)
            page.get_by_text("agent step 2").first.wait_for(timeout=30_000)
            listed = page.locator("body").inner_text()
            strip = page.locator(".film-strip-frame").first
            strip.wait_for(timeout=30_000)
            image = strip.evaluate(
                "async e => { const url = getComputedStyle(e).backgroundImage.slice(5, -2);"
                " const r = await fetch(url); return [r.status, ...new Uint8Array(await r.arrayBuffer()).slice(0, 2)]; }"
            )
            browser.close()
        assert "agent step 1" in listed and "price is wrong" in listed
        assert image == [200, 0xFF, 0xD8], image  # the film strip shows the test's pictures (JPEG)
    finally:
        os.killpg(viewer.pid, signal.SIGKILL)
        viewer.wait(timeout=10)
