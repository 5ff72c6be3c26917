"""Two screenshots compared, pure: the share of pixels that differ and a diff image. Pillow's ImageChops finds the
differing box, numpy measures pixelmatch's colour distance in it, and pixelmatch's anti-aliasing check runs only on
the pixels over the threshold (it is per pixel, in Python)."""

from __future__ import annotations

import io
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt
from PIL import Image, ImageChops
from pixelmatch import antialiased

from preview_qa.events import VisualImages
from preview_qa.manifest.models import VisualCheck
from preview_qa.results import VisualShot

MAX_YIQ_DELTA = 35215.0  # pixelmatch's largest squared YIQ distance: `threshold` scales it
AA_CHECK_LIMIT = 20_000  # past this many differing pixels the page has plainly changed: the rest count as different
FADE = 0.1  # how much of the page shows under the diff's red (pixelmatch's alpha)
RED, YELLOW = (255, 0, 0), (255, 210, 0)  # a changed pixel; an anti-aliased one (shown, not counted)

FINAL = "final"  # the final page's screenshot; a step's is keyed by its number
Pixels = npt.NDArray[np.float32]


@dataclass(frozen=True)
class Comparison:
    """How one screenshot of the PR's run differs from the default branch's."""

    differing: int  # pixels that differ (anti-aliasing not counted)
    total: int
    diff_png: bytes | None = None  # changed pixels in red over a faded copy of the page; None when none differ
    size_problem: str | None = None  # the two sizes, when they differ: nothing else is compared

    @property
    def diff_ratio(self) -> float:
        return 1.0 if self.size_problem else (self.differing / self.total if self.total else 0.0)


def compare(before: bytes, after: bytes, threshold: float = 0.1) -> Comparison:
    """`after` (the PR's screenshot) against `before` (the default branch's), both PNGs of full size."""
    old, new = _rgba(before), _rgba(after)
    if old.size != new.size:
        return Comparison(0, 0, size_problem=f"the default branch's screenshot is {_size(old)}, this PR's is {_size(new)}")
    total = old.width * old.height
    box = ImageChops.difference(old, new).getbbox(alpha_only=False)  # both opaque: the colours alone differ
    if box is None:  # the fast path: not one byte differs
        return Comparison(0, total)
    left, top = box[:2]
    a, b = np.asarray(old.crop(box), np.float32), np.asarray(new.crop(box), np.float32)
    ys, xs = np.nonzero(_yiq_delta(a, b) > MAX_YIQ_DELTA * threshold * threshold)
    ys, xs = ys + top, xs + left
    changed = np.zeros((old.height, old.width), bool)
    anti_aliased = np.zeros_like(changed)
    old_px, new_px = _packed(old), _packed(new)
    plain = (_equal_neighbours(old_px, ys, xs) > 2) & (_equal_neighbours(new_px, ys, xs) > 2)
    changed[ys[plain], xs[plain]] = True
    old_bytes, new_bytes = old.tobytes(), new.tobytes()
    for n, (y, x) in enumerate(zip(ys[~plain].tolist(), xs[~plain].tolist(), strict=True)):
        aa = n < AA_CHECK_LIMIT and (
            antialiased(old_bytes, x, y, old.width, old.height, new_bytes)
            or antialiased(new_bytes, x, y, old.width, old.height, old_bytes)
        )
        (anti_aliased if aa else changed)[y, x] = True
    differing = int(changed.sum())
    return Comparison(differing, total, _diff_png(old, changed, anti_aliased) if differing else None)


def _packed(image: Image.Image) -> npt.NDArray[np.uint32]:
    """Each pixel's RGBA as one number, to compare pixels whole."""
    return np.asarray(image, np.uint8).view(np.uint32)[..., 0]


def _equal_neighbours(px: npt.NDArray[np.uint32], ys: npt.NDArray[np.intp], xs: npt.NDArray[np.intp]) -> npt.NDArray[np.intp]:
    """For each pixel, how many of its 8 neighbours are the same colour, plus one on the image's edge: pixelmatch's
    count, in which more than 2 means plainly not anti-aliasing (its check would stop there: it is skipped)."""
    height, width = px.shape
    count = ((xs == 0) | (ys == 0) | (xs == width - 1) | (ys == height - 1)).astype(np.intp)
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            ny, nx = ys + dy, xs + dx
            inside = (ny >= 0) & (ny < height) & (nx >= 0) & (nx < width) & ((dy, dx) != (0, 0))
            count += inside & (px[ny.clip(0, height - 1), nx.clip(0, width - 1)] == px[ys, xs])
    return np.asarray(count, np.intp)


def _rgba(png: bytes) -> Image.Image:
    with Image.open(io.BytesIO(png)) as image:
        image.load()
        if image.mode != "RGBA":
            return image.convert("RGBA")
        # Transparent pixels as pixelmatch sees them: over white.
        return Image.alpha_composite(Image.new("RGBA", image.size, "white"), image)


def _size(image: Image.Image) -> str:
    return f"{image.width}×{image.height}"


def _yiq_delta(a: Pixels, b: Pixels) -> Pixels:
    """pixelmatch's perceived colour distance (squared, in YIQ), per pixel of two opaque RGB(A) arrays."""
    d = a[..., :3] - b[..., :3]
    y = d @ np.array([0.29889531, 0.58662247, 0.11448223], np.float32)
    i = d @ np.array([0.59597799, -0.27417610, -0.32180189], np.float32)
    q = d @ np.array([0.21147017, -0.52261711, 0.31114694], np.float32)
    return np.asarray(0.5053 * y * y + 0.299 * i * i + 0.1957 * q * q, np.float32)


def _diff_png(old: Image.Image, changed: npt.NDArray[np.bool_], anti_aliased: npt.NDArray[np.bool_]) -> bytes:
    """The default branch's page faded to grey, changed pixels red, anti-aliased ones yellow (pixelmatch's picture)."""
    grey = np.asarray(old.convert("L"), np.float32)
    faded = (255 + (grey - 255) * FADE).astype(np.uint8)
    out = np.repeat(faded[..., None], 3, axis=2)
    out[anti_aliased] = YELLOW
    out[changed] = RED
    buffer = io.BytesIO()
    Image.fromarray(out, "RGB").save(buffer, "PNG", compress_level=1)  # fast: it is evidence, not an archive
    return buffer.getvalue()


def step_key(step: str) -> int | Literal["final"]:
    return "final" if step == FINAL else int(step)


def compare_all(visual: VisualCheck, before: Mapping[str, bytes], after: Mapping[str, bytes]) -> list[VisualImages]:
    """Each of the PR's screenshots that the default branch also has, in step order (the final page last), compared."""
    found = []
    for step in sorted(after.keys() & before.keys(), key=lambda s: (s == FINAL, int(s) if s != FINAL else 0)):
        c = compare(before[step], after[step], visual.threshold)
        over = c.size_problem is not None or c.diff_ratio > visual.max_diff
        shot = VisualShot(step=step_key(step), diff_ratio=round(c.diff_ratio, 6), size_problem=c.size_problem, over=over)
        found.append(VisualImages(shot, after[step], before[step], c.diff_png))
    return found


def not_compared(before: Mapping[str, bytes], after: Mapping[str, bytes]) -> list[str]:
    """The PR's screenshots that the default branch has no counterpart for (a step its run did not replay)."""
    return sorted(after.keys() - before.keys())
