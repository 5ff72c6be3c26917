"""trace.zip without a browser: which runs keep one (--trace) and which are written at all, where it is listed, and its text
redacted in every entry."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest
from PIL import Image

from preview_qa.config import TraceMode
from preview_qa.engine.agent_port import AgentRequest
from preview_qa.events import FinalScreenshot, RunFinished, RunStarted, StepRecorded, TestFinished, TraceRecorded
from preview_qa.reporters.artifacts import ArtifactsReporter
from preview_qa.reporters.output.film_strip import with_film_strip
from preview_qa.results import Status
from preview_qa.secrets.redact import Redactor, base64_forms, forms
from preview_qa.secrets.trace_zip import redact_trace
from preview_qa.verdict.agent_run import AgentRun, DoneReport
from tests.builders import PASS, plain_png, result, run, run_of, specs_named

SECRET = "s3cr3t-Pa55-word-4242"
FAIL_REPORT = DoneReport(text=json.dumps({"status": "fail", "reason": "the cart is empty"}), success=True)


def a_zip(entries: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for name, body in entries.items():
            z.writestr(name, body)
    return out.getvalue()


@pytest.mark.parametrize(
    ("mode", "kept"),
    [
        (TraceMode.RETAIN_ON_FAILURE, {"failing", "erroring"}),
        (TraceMode.ON, {"failing", "erroring", "passing"}),
        (TraceMode.OFF, set()),
    ],
)
def test_trace_mode_decides_which_tests_keep_their_trace(tmp_path: Path, mode: TraceMode, kept: set[str]) -> None:
    reporter = ArtifactsReporter(tmp_path, mode)
    reporter.handle(RunStarted(manifest="qa.yml", base_url="http://x", test_names=[]))
    tests = [result("failing", Status.FAILED), result("erroring", Status.ERRORED), result("passing", Status.PASSED)]
    for test in tests:
        reporter.handle(TraceRecorded(name=test.name, zip=a_zip({"trace.trace": b"{}"}), with_screenshots=True))
        reporter.handle(TestFinished(result=test))
    reporter.handle(RunFinished(result=run_of(*tests)))
    reporter.finish()
    listed = {t["name"]: t["artifacts"].get("trace") for t in json.loads((tmp_path / "results.json").read_text())["tests"]}
    assert {name for name, trace in listed.items() if trace} == kept
    for name in kept:
        assert zipfile.ZipFile(tmp_path / str(listed[name])).read("trace.trace") == b"{}"


def test_every_text_entry_is_redacted_in_every_encoding_and_images_are_left_as_they_are() -> None:
    every_form = [*forms(SECRET), *base64_forms(SECRET)]
    entries = {f"resources/{i}.txt": f"before {form} after".encode() for i, form in enumerate(every_form)}
    entries["trace.trace"] = ('{"type":"frame-snapshot","value":"' + SECRET + '"}\n').encode()
    entries["resources/page.jpeg"] = b"\xff\xd8\xff binary"
    entries["resources/latin1.bin"] = ("caf\xe9 " + SECRET).encode("latin-1")
    redacted = redact_trace(a_zip(entries), Redactor({"pw": SECRET}))
    with zipfile.ZipFile(io.BytesIO(redacted)) as z:
        assert sorted(z.namelist()) == sorted(entries)
        for name in z.namelist():
            body = z.read(name).decode("utf-8", errors="replace")
            assert not [f for f in every_form if f in body], name
        assert z.read("trace.trace") == b'{"type":"frame-snapshot","value":"<secret>pw</secret>"}\n'
        assert z.read("resources/page.jpeg") == b"\xff\xd8\xff binary"
        assert z.read("resources/latin1.bin") == b""  # not UTF-8 and holding a secret: emptied


def test_without_secrets_the_trace_is_kept_byte_for_byte() -> None:
    data = a_zip({"trace.trace": b"{}"})
    assert redact_trace(data, Redactor({})) == data


@pytest.mark.parametrize(
    ("mode", "written"), [(TraceMode.RETAIN_ON_FAILURE, {"failing"}), (TraceMode.ON, {"passing", "failing"})]
)
def test_a_run_asks_for_its_trace_written_only_when_the_runs_own_verdict_wants_it(mode: TraceMode, written: set[str]) -> None:
    """--trace retain-on-failure: the runner tells the agent, once a run ended, whether its trace is worth writing;
    a passing run's is not (the recording itself goes on), a failing one's is."""
    asked: dict[str, bool] = {}

    async def agent(request: AgentRequest) -> AgentRun:
        ended = AgentRun(done=PASS if request.spec.name == "passing" else FAIL_REPORT, steps=1)
        asked[request.spec.name] = request.trace_wanted(ended)
        return ended

    result, _ = run(specs_named("passing", "failing"), agent, trace=mode)
    assert [t.status for t in result.tests] == [Status.PASSED, Status.FAILED]
    assert {name for name, wanted in asked.items() if wanted} == written


def test_a_trace_not_written_for_a_passing_run_is_said_so_if_its_test_ends_failed_after_all(tmp_path: Path) -> None:
    reporter = ArtifactsReporter(tmp_path, TraceMode.RETAIN_ON_FAILURE)
    reporter.handle(RunStarted(manifest="qa.yml", base_url="http://x", test_names=[]))
    tests = [result("passed", Status.PASSED), result("failed later", Status.FAILED)]
    for test in tests:
        reporter.handle(TraceRecorded(name=test.name, zip=None, with_screenshots=True))
        reporter.handle(TestFinished(result=test))
    reporter.handle(RunFinished(result=run_of(*tests)))
    reporter.finish()
    saved = {t["name"]: t for t in json.loads((tmp_path / "results.json").read_text())["tests"]}
    assert not any("trace" in t["artifacts"] for t in saved.values())
    lines = {
        name: [json.loads(line) for line in (tmp_path / t["artifacts"]["events"]).read_text().splitlines()]
        for name, t in saved.items()
        if "events" in t["artifacts"]
    }
    assert list(lines) == ["failed later"]  # the passing test's trace was not wanted: nothing to say
    [line] = lines["failed later"]
    assert (line["type"], line["error"]) == ("trace_not_written", True)
    assert line["why"] == "the run passed when its trace was stopped, so it was not written; the test ended failed"


CLOCK = {"type": "context-options", "version": 8, "wallTime": 1_700_000_000_000, "monotonicTime": 500.0}
PAGE = {"type": "event", "time": 501.0, "class": "BrowserContext", "method": "page", "params": {"pageId": "page@abc"}}
A_TRACE = a_zip({"trace.trace": (json.dumps(CLOCK) + "\n" + json.dumps(PAGE) + "\n").encode(), "trace.network": b""})


def film_strip(path: Path) -> list[tuple[dict, tuple[int, int, int]]]:
    """A trace's screencast frames, each with its image's middle pixel (red, green, blue)."""
    with zipfile.ZipFile(path) as z:
        frames = [json.loads(line) for line in z.read("trace.trace").splitlines() if b"screencast-frame" in line]
        return [(f, Image.open(io.BytesIO(z.read(f["file"]))).convert("RGB").getpixel((400, 250))) for f in frames]


@pytest.mark.parametrize("with_screenshots", [True, False])
def test_a_kept_trace_shows_the_runs_own_pictures_as_its_film_strip(tmp_path: Path, with_screenshots: bool) -> None:
    """No screencast is recorded: the trace viewer's film strip is the pictures the run took, placed at the moments they
    were taken on the trace's own clock, on its page; none in a run with secrets (with_screenshots false)."""
    reporter = ArtifactsReporter(tmp_path, TraceMode.RETAIN_ON_FAILURE)
    reporter.handle(RunStarted(manifest="qa.yml", base_url="http://x", test_names=[]))
    wall = CLOCK["wallTime"] / 1000
    step = dict(name="failing", goal="", actions=[], url="http://x/", error=None)
    reporter.handle(
        StepRecorded(
            **step,
            number=1,
            screenshot_png=plain_png("red"),
            form_screenshot_png=plain_png("blue"),
            form_screenshot_at=wall + 1.2,
            at=wall + 1.5,
        )
    )
    reporter.handle(StepRecorded(**step, number=2, screenshot_png=None, at=wall + 2.0))  # a step whose picture was withheld
    reporter.handle(FinalScreenshot(name="failing", png=plain_png("lime"), at=wall + 3.25))
    reporter.handle(TraceRecorded(name="failing", zip=A_TRACE, with_screenshots=with_screenshots))
    failing = result("failing", Status.FAILED)
    reporter.handle(TestFinished(result=failing))
    reporter.handle(RunFinished(result=run_of(failing)))
    reporter.finish()
    [test] = json.loads((tmp_path / "results.json").read_text())["tests"]
    frames = film_strip(tmp_path / test["artifacts"]["trace"])
    if not with_screenshots:
        assert frames == []
        return
    brightest = [max(range(3), key=pixel.__getitem__) for _, pixel in frames]  # JPEG: 254 for 255
    assert brightest == [2, 0, 1]  # blue, red, green: the form, its step, the final page
    assert [f["timestamp"] for f, _ in frames] == [1700.0, 2000.0, 3750.0]  # 500 ms on the trace's clock at its wallTime
    assert {(f["pageId"], f["width"], f["height"]) for f, _ in frames} == {("page@abc", 1280, 800)}


def test_a_trace_without_its_clock_is_written_as_it_came() -> None:
    data = a_zip({"trace.trace": b"{}"})  # made once: a zip's entries carry the time they were written
    assert with_film_strip(data, [(1.0, plain_png("red"))]) == data
