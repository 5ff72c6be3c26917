"""The results folder as a reviewer finds it: safe folder names, shrunk screenshots, run.gif, events.jsonl, results.json."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from PIL import Image

from preview_qa.events import FinalScreenshot, Observed, RunFinished, RunStarted, StepRecorded, TestFinished
from preview_qa.reporters.artifacts import ArtifactsReporter
from preview_qa.reporters.output import files
from preview_qa.reporters.output.files import safe_name
from preview_qa.reporters.output.images import (
    GIF_MAX_FRAMES,
    GIF_WIDTH,
    KEEP_BYTES,
    SCREENSHOT_WIDTH,
    animation,
    shrink_screenshot,
)
from preview_qa.results import RunResult, Status
from tests.builders import plain_png, result

PORTABLE = re.compile(r"[a-z0-9][a-z0-9-]*-[0-9a-f]{8}")


def busy_png(seed: int = 0, size: tuple[int, int] = (1280, 800)) -> bytes:
    """A screenshot-sized PNG too busy to compress well, like a page full of photos."""
    image = Image.effect_noise(size, 40 + seed).convert("RGB")
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


@pytest.mark.parametrize(
    "name",
    [
        "Log in works",
        "Café ☕ — checkout",
        "日本語のテスト",
        "a/b\\c",
        "..",
        "../../etc/passwd",
        "x" * 500,
        "",
        " ",
        ".hidden",
        "CON",
        "nul:",
        "tab\tand\nnewline",
        "emoji 🚀🚀",
    ],
)
def test_any_test_name_gives_a_portable_folder_inside_tests(tmp_path: Path, name: str) -> None:
    folder = safe_name(name)
    assert PORTABLE.fullmatch(folder), folder
    assert len(folder) <= 70
    created = tmp_path / files.test_dir(name)
    created.mkdir(parents=True)
    assert created.resolve().parent == (tmp_path / "tests").resolve()


def test_names_that_slug_alike_still_get_their_own_folders() -> None:
    names = ["Log in", "log in", "Log-in", "Log  in", "Log/in", "Lög in", "x" * 500, "x" * 501, "..", "../.."]
    assert len({safe_name(n) for n in names}) == len(names)


def test_a_readable_part_is_kept() -> None:
    assert safe_name("Café ☕ — checkout").startswith("cafe-checkout-")


@given(st.text(max_size=600))
def test_safe_name_is_portable_for_any_text(name: str) -> None:
    assert PORTABLE.fullmatch(safe_name(name))


def test_a_busy_screenshot_is_shrunk_to_a_png_that_opens() -> None:
    raw = busy_png()
    small = shrink_screenshot(raw)
    assert len(small) < len(raw) / 3
    image = Image.open(io.BytesIO(small))
    assert image.format == "PNG" and image.width == SCREENSHOT_WIDTH and image.height == 600


def test_a_plain_screenshot_is_kept_as_the_browser_made_it() -> None:
    raw = plain_png()
    assert len(raw) <= KEEP_BYTES
    assert shrink_screenshot(raw) == raw


def gif_of(frames: list[bytes]) -> Image.Image:
    gif = animation(frames)
    assert gif is not None
    return Image.open(io.BytesIO(gif))


def test_animation_is_a_small_looping_gif_with_a_frame_per_screenshot() -> None:
    gif = gif_of([busy_png(i) for i in range(3)] + [plain_png()])
    assert gif.format == "GIF" and gif.n_frames == 4 and gif.width == GIF_WIDTH
    assert gif.info["loop"] == 0


def test_animation_of_many_steps_keeps_first_and_last_and_a_bounded_count() -> None:
    frames = [plain_png()] * (GIF_MAX_FRAMES * 2) + [busy_png()]
    gif = gif_of(frames)
    assert gif.n_frames <= GIF_MAX_FRAMES
    gif.seek(gif.n_frames - 1)
    assert len(set(gif.convert("L").getdata())) > 2  # the busy last frame is there


def test_animation_accepts_frames_of_different_sizes_and_skips_unreadable_ones() -> None:
    gif = gif_of([busy_png(size=(1280, 800)), b"junk", busy_png(size=(800, 1280))])
    assert gif.n_frames == 2


def test_no_animation_from_fewer_than_two_readable_frames() -> None:
    assert animation([plain_png(), b"junk"]) is None


def test_reporter_writes_every_kind_of_evidence(tmp_path: Path) -> None:
    name = "Checkout / ünïcode .."
    reporter = ArtifactsReporter(tmp_path)
    reporter.handle(RunStarted(manifest="qa.yml", base_url="http://x", test_names=[name]))
    for number in (1, 2, 10):
        reporter.handle(
            StepRecorded(
                name=name,
                number=number,
                goal=f"goal {number}",
                actions=[{"click": {"index": 4}}],
                url="http://x/",
                error=None,
                screenshot_png=busy_png(number),
                settled="waited 1.0 s for the answer on WebSocket /ws" if number == 1 else None,
            )
        )
    reporter.handle(
        StepRecorded(name=name, number=11, goal="no picture", actions=[], url="", error="step failed", screenshot_png=None)
    )
    reporter.handle(
        Observed(name=name, kind="llm_error", error=True, detail={"purpose": "agent", "status": 500, "message": "boom"})
    )
    reporter.handle(FinalScreenshot(name=name, png=b"not a png at all"))
    test = result(name, Status.FAILED, steps=11)
    reporter.handle(TestFinished(result=test))
    run = RunResult(manifest="qa.yml", base_url="http://x", started_at="now", tests=[test])
    reporter.handle(RunFinished(result=run))

    folder = tmp_path / files.test_dir(name)
    rel = files.test_dir(name)
    saved = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    assert saved["tests"][0]["artifacts"] == {
        "screenshots": [f"{rel}/step-01.png", f"{rel}/step-02.png", f"{rel}/step-10.png"],
        "final_screenshot": f"{rel}/final.png",
        "events": f"{rel}/events.jsonl",
        "animation": f"{rel}/run.gif",
    }
    assert test.artifacts == {}  # the event's result is never changed: other reporters read it too
    for shot in ("step-01.png", "step-02.png", "step-10.png"):
        assert Image.open(folder / shot).width == SCREENSHOT_WIDTH
    assert (folder / "final.png").read_bytes() == b"not a png at all"  # unreadable, so kept as it came
    assert Image.open(folder / "run.gif").n_frames == 3
    lines = [json.loads(line) for line in (folder / "events.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [(e["type"], e["error"]) for e in lines] == [("step", False)] * 3 + [("step", True), ("llm_error", True)]
    assert all(e["ts"].endswith("+00:00") for e in lines)
    assert lines[-1]["status"] == 500 and lines[3]["result_error"] == "step failed"
    assert lines[0]["settled"] == "waited 1.0 s for the answer on WebSocket /ws" and "settled" not in lines[1]
    assert saved["tests"][0]["artifacts"]["animation"] == f"{rel}/run.gif"
    assert oct((tmp_path / "results.json").stat().st_mode & 0o777) == "0o644"
    assert saved["schema_version"] == 17
    words = saved["tests"][0]["steps_in_words"]  # the steps as the failure card tells them, each with its screenshot
    assert [(s["number"], s["actions"], s["screenshot"]) for s in words[:3]] == [
        (n, ["Clicked an unnamed element"], f"{rel}/step-{n:02d}.png") for n in (1, 2, 10)
    ]
    assert words[3] == {"number": 11, "actions": [], "page": "", "error": "step failed", "not_run": [], "screenshot": None}


def test_results_json_lists_a_finished_test_before_the_run_ends(tmp_path: Path) -> None:
    reporter = ArtifactsReporter(tmp_path)
    reporter.handle(RunStarted(manifest="qa.yml", base_url="http://x", test_names=["a", "b"]))
    reporter.handle(StepRecorded(name="a", number=1, goal="", actions=[], url="", error=None, screenshot_png=plain_png()))
    reporter.handle(TestFinished(result=result("a", Status.FAILED, steps=1)))
    reporter.flush()  # what a crash at this point would leave, once the writer thread is done

    saved = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    assert [t["name"] for t in saved["tests"]] == ["a"]
    assert saved["tests"][0]["artifacts"]["screenshots"] == [f"{files.test_dir('a')}/step-01.png"]
    assert "animation" not in saved["tests"][0]["artifacts"]  # one frame is no animation


def test_a_replays_final_page_is_its_last_steps_picture_too_written_twice_shown_once(tmp_path: Path) -> None:
    """A replay photographs its final page once: that picture is also its last acting step's (step-02.png), shrunk
    once, and run.gif shows it once, after the first step's."""
    reporter = ArtifactsReporter(tmp_path)
    reporter.handle(RunStarted(manifest="qa.yml", base_url="http://x", test_names=["r"]))
    reporter.handle(StepRecorded(name="r", number=1, goal="", actions=[], url="", error=None, screenshot_png=busy_png(1)))
    reporter.handle(StepRecorded(name="r", number=2, goal="", actions=[], url="", error=None, screenshot_png=None))
    reporter.handle(FinalScreenshot(name="r", png=busy_png(2), step=2))
    test = result("r", Status.PASSED, steps=2)
    reporter.handle(TestFinished(result=test))
    reporter.handle(RunFinished(result=RunResult(manifest="qa.yml", base_url="http://x", started_at="now", tests=[test])))

    folder = tmp_path / files.test_dir("r")
    assert (folder / "step-02.png").read_bytes() == (folder / "final.png").read_bytes()
    assert Image.open(folder / "final.png").width == SCREENSHOT_WIDTH  # shrunk, as every busy page is
    saved = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))["tests"][0]
    assert saved["artifacts"]["screenshots"] == [f"{files.test_dir('r')}/step-{n:02d}.png" for n in (1, 2)]
    assert [s["screenshot"] for s in saved["steps_in_words"]] == [f"{files.test_dir('r')}/step-{n:02d}.png" for n in (1, 2)]
    assert Image.open(folder / "run.gif").n_frames == 2  # the first step's page, then the last's (the final page) once
