"""The screenshot comparison (verdict/checks/visual.py) on synthetic images: identical pictures give 0, a recoloured block
counts every pixel of it and draws it red, anti-aliased edges alone do not count, a small change stays under
max_diff, sizes that differ are named, steps compare in order; and the run's rule (--fail-on visual,
--accept-visual)."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image, ImageDraw
from pixelmatch import pixelmatch

from preview_qa.config import FailOn
from preview_qa.manifest.models import VisualCheck
from preview_qa.results import RunResult, Status, TestResult, VisualShot
from preview_qa.verdict.checks import visual
from preview_qa.verdict.checks.visual import compare, compare_all, not_compared


def png(size: tuple[int, int] = (200, 100), block: str | None = None, text_at: int | None = None) -> bytes:
    image = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(image)
    if block:
        draw.rectangle((10, 10, 29, 29), fill=block)  # 20 x 20 = 400 pixels
    if text_at is not None:
        draw.ellipse((text_at, 40, text_at + 50, 90), fill="black")
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


def _png(image: Image.Image) -> bytes:
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


def disc(smooth: bool) -> bytes:
    """A black disc on white, with hard edges, or drawn at 4x and scaled down: its edge pixels anti-aliased."""
    scale = 4 if smooth else 1
    image = Image.new("RGB", (200 * scale, 100 * scale), "white")
    ImageDraw.Draw(image).ellipse((25 * scale, 25 * scale, 75 * scale, 75 * scale), fill="black")
    out = io.BytesIO()
    image.resize((200, 100), Image.Resampling.BOX).save(out, "PNG")
    return out.getvalue()


def test_identical_pictures_give_zero_and_no_diff_image() -> None:
    same = compare(png(block="blue"), png(block="blue"))
    assert (same.differing, same.diff_ratio, same.diff_png, same.size_problem) == (0, 0.0, None, None)


def test_a_recoloured_block_counts_every_pixel_and_is_drawn_red_over_a_faded_copy() -> None:
    c = compare(png(block="blue"), png(block="red"))
    assert c.differing == 400 and c.diff_ratio == 400 / 20_000
    assert c.diff_png is not None
    with Image.open(io.BytesIO(c.diff_png)) as diff:
        rgb = diff.convert("RGB")
        assert rgb.getpixel((20, 20)) == (255, 0, 0) and rgb.getpixel((150, 80)) == (255, 255, 255)


def test_a_colour_within_the_threshold_does_not_count() -> None:
    assert compare(png(block="#0000ff"), png(block="#0000fb")).differing == 0
    assert compare(png(block="#0000ff"), png(block="#0000fb"), threshold=0.0).differing == 400


def test_the_count_is_pixelmatchs_own_on_text_curves_and_noise() -> None:
    """The vectorised algorithm against the PyPI port of pixelmatch, pixel loop and all (includeAA off, as ours)."""
    rng = np.random.default_rng(7)
    for seed in range(3):
        pictures = []
        for shift in (0, 1):
            image = Image.new("RGB", (120, 60), "white")
            draw = ImageDraw.Draw(image)
            draw.text((5 + shift, 5), "Anti-aliased? Moved.", fill="#222")
            draw.ellipse((60, 20 + shift, 100, 55), fill="#36c")
            noise = rng.integers(0, 256, (10, 20, 3), dtype=np.uint8)  # a changed patch: plain differences
            image.paste(Image.fromarray(noise), (95, 2 + seed))
            pictures.append(image)
        a, b = (p.convert("RGBA") for p in pictures)
        theirs = pixelmatch(a.tobytes(), b.tobytes(), 120, 60, threshold=0.1)
        ours = compare(*(_png(p) for p in pictures)).differing
        assert ours == theirs > 0, (seed, ours, theirs)


def test_anti_aliased_edges_alone_count_far_less_than_the_pixels_that_changed(monkeypatch: pytest.MonkeyPatch) -> None:
    before, after = disc(smooth=False), disc(smooth=True)
    with_check = compare(before, after).differing
    monkeypatch.setattr(visual, "_anti_aliased", lambda one, two, ys, xs: np.zeros(len(ys), bool))  # the check off
    without_check = compare(before, after).differing
    assert without_check > 100 and with_check < without_check / 5, (with_check, without_check)


def test_sizes_that_differ_are_a_difference_naming_both() -> None:
    c = compare(png((200, 100)), png((200, 120)))
    assert c.diff_ratio == 1.0
    assert c.size_problem == "the default branch's screenshot is 200×100, this PR's is 200×120"


def test_compare_all_goes_in_step_order_marks_what_is_over_max_diff_and_names_the_missing() -> None:
    before = {"final": png(block="blue"), "2": png(block="blue"), "10": png()}
    after = {"final": png(block="blue"), "2": png(block="red"), "10": png(), "11": png()}
    images = compare_all(VisualCheck(max_diff=0.01), before, after)
    assert [(i.shot.step, i.shot.over) for i in images] == [(2, True), (10, False), ("final", False)]
    assert images[0].diff is not None and images[1].diff is None
    assert not_compared(before, after) == ["11"]


def _run(accepted: bool) -> RunResult:
    shot = VisualShot(step=3, diff_ratio=0.024, over=True)
    test = TestResult(name="t", file="qa.yml", line=1, status=Status.PASSED, reason="ok", visual=[shot], visual_accepted=accepted)
    return RunResult(manifest="qa.yml", base_url="http://x", started_at="now", tests=[test])


def test_a_change_is_said_in_words_does_not_block_by_default_and_blocks_under_fail_on_visual_unless_accepted() -> None:
    changed = _run(accepted=False)
    assert changed.tests[0].changed == "the page looks different from the default branch at step 3 (2.4% of pixels)"
    assert changed.tests[0].model_dump(mode="json")["changed"] == changed.tests[0].changed  # results.json says it too
    assert not FailOn.FAILED.fails(changed) and FailOn.VISUAL.fails(changed)
    accepted = _run(accepted=True)
    assert accepted.tests[0].changed is None and not FailOn.VISUAL.fails(accepted)
