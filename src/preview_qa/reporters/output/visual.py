"""Where expect.visual's images live in a test's folder: `visual/<step>-{before,after,diff}.png`, full size (a
reviewer looks at pixels), and a test's comparisons with the paths of those on disk."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from preview_qa.events import VisualCompared
from preview_qa.results import VisualShot

KINDS = ("before", "after", "diff")


def visual_file(folder: str, shot: VisualShot, kind: str) -> str:
    """The image's path under the test's `folder`: `<folder>/visual/step-03-diff.png`, `<folder>/visual/final-diff.png`."""
    step = "final" if shot.step == "final" else f"step-{shot.step:02d}"
    return f"{folder}/visual/{step}-{kind}.png"


def visual_images(folder: str, event: VisualCompared) -> Iterator[tuple[str, bytes]]:
    """Each compared screenshot's images to write, by path under the results folder."""
    for image in event.images:
        for kind, png in zip(KINDS, (image.before, image.after, image.diff), strict=True):
            if png:
                yield visual_file(folder, image.shot, kind), png


def with_visual_files(out: Path, folder: str, shots: list[VisualShot]) -> list[VisualShot]:
    """The comparisons, each with the paths of its images that are on disk."""
    return [
        shot.model_copy(update={k: p if (out / (p := visual_file(folder, shot, k))).is_file() else None for k in KINDS})
        for shot in shots
    ]
