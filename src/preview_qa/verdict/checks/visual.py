"""Two screenshots compared, pure: the share of pixels that differ and a diff image. Pillow's ImageChops finds the
differing box, then numpy runs pixelmatch's algorithm on it: its colour distance, and its anti-aliasing check on the
pixels over the threshold only (vectorised: the PyPI port's per-pixel Python loop is what the unit test checks it by)."""

from __future__ import annotations

import io
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt
from PIL import Image, ImageChops

from preview_qa.events import VisualImages
from preview_qa.manifest.models import VisualCheck
from preview_qa.results import FINAL_SHOT, VisualShot

MAX_YIQ_DELTA = 35215.0  # pixelmatch's largest squared YIQ distance: `threshold` scales it
FADE = 0.1  # how much of the page shows under the diff's red (pixelmatch's alpha)
RED, YELLOW = (255, 0, 0), (255, 210, 0)  # a changed pixel; an anti-aliased one (shown, not counted)

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
    one, two = _Picture(old, box), _Picture(new, box)
    aa = _anti_aliased(one, two, ys, xs) | _anti_aliased(two, one, ys, xs)
    changed = np.zeros((old.height, old.width), bool)
    anti_aliased = np.zeros_like(changed)
    changed[ys[~aa], xs[~aa]] = True
    anti_aliased[ys[aa], xs[aa]] = True
    differing = int(changed.sum())
    return Comparison(differing, total, _diff_png(old, changed, anti_aliased) if differing else None)


Coords = npt.NDArray[np.intp]
Y_WEIGHTS = (0.29889531, 0.58662247, 0.11448223)  # pixelmatch's rgb2y


class _Picture:
    """A screenshot as pixelmatch reads it, around the differing `box` (2 pixels more: a neighbour's neighbours): each
    pixel's RGBA as one number (to compare pixels whole), its brightness. Indexed by the whole picture's coordinates."""

    def __init__(self, image: Image.Image, box: tuple[int, int, int, int]):
        self.width, self.height = image.size
        left, top, right, bottom = box
        self.left, self.top = max(left - 2, 0), max(top - 2, 0)
        rgba = np.asarray(image.crop((self.left, self.top, min(right + 2, self.width), min(bottom + 2, self.height))))
        self._px: npt.NDArray[np.uint32] = rgba.view(np.uint32)[..., 0]
        rgb = rgba[..., :3].astype(np.float64)  # float64, in pixelmatch's order: its equal brightnesses are equal here
        self._y: npt.NDArray[np.float64] = rgb[..., 0] * Y_WEIGHTS[0] + rgb[..., 1] * Y_WEIGHTS[1] + rgb[..., 2] * Y_WEIGHTS[2]

    def px(self, ys: Coords, xs: Coords) -> npt.NDArray[np.uint32]:
        return self._px[ys - self.top, xs - self.left]

    def y(self, ys: Coords, xs: Coords) -> npt.NDArray[np.float64]:
        return self._y[ys - self.top, xs - self.left]

    def edge(self, ys: Coords, xs: Coords) -> npt.NDArray[np.intp]:
        """1 for a pixel on the picture's edge (pixelmatch counts it as one equal neighbour more), else 0."""
        return np.asarray((xs == 0) | (ys == 0) | (xs == self.width - 1) | (ys == self.height - 1), np.intp)

    def neighbours(self, ys: Coords, xs: Coords) -> Iterator[tuple[npt.NDArray[np.bool_], Coords, Coords]]:
        """The 8 neighbours in pixelmatch's order (x outer, y inner): whether inside the picture, and where (clipped)."""
        for dx in (-1, 0, 1):
            for dy in (-1, 0, 1):
                if dx or dy:
                    ny, nx = ys + dy, xs + dx
                    inside = (ny >= 0) & (ny < self.height) & (nx >= 0) & (nx < self.width)
                    yield inside, ny.clip(0, self.height - 1), nx.clip(0, self.width - 1)

    def many_siblings(self, ys: Coords, xs: Coords) -> npt.NDArray[np.bool_]:
        """pixelmatch's has_many_siblings: 3 or more of the 8 neighbours the very same colour (the edge counts one)."""
        count = self.edge(ys, xs)
        for inside, ny, nx in self.neighbours(ys, xs):
            count = count + (inside & (self.px(ny, nx) == self.px(ys, xs)))
        return np.asarray(count > 2)


def _anti_aliased(one: _Picture, two: _Picture, ys: Coords, xs: Coords) -> npt.NDArray[np.bool_]:
    """pixelmatch's antialiased(one, x, y, two) for many pixels at once (Vysniauskas's detector): no more than 2 equally
    bright neighbours, a darker and a brighter one, and the darkest or the brightest with 3 same-coloured neighbours of
    its own in both pictures."""
    zeroes = one.edge(ys, xs)
    darkest, brightest = np.zeros(len(ys)), np.zeros(len(ys))
    dark_y, dark_x, bright_y, bright_x = ys, xs, ys, xs  # the pixel itself until a darker (brighter) one is found
    centre = one.y(ys, xs)
    for inside, ny, nx in one.neighbours(ys, xs):
        delta = np.where(inside, centre - one.y(ny, nx), 0.0)
        zeroes = zeroes + (inside & (delta == 0))
        darker, brighter = inside & (delta < darkest), inside & (delta > brightest)  # strictly: the first one wins
        darkest, dark_y, dark_x = np.where(darker, delta, darkest), np.where(darker, ny, dark_y), np.where(darker, nx, dark_x)
        brightest = np.where(brighter, delta, brightest)
        bright_y, bright_x = np.where(brighter, ny, bright_y), np.where(brighter, nx, bright_x)
    dark_plain = one.many_siblings(dark_y, dark_x) & two.many_siblings(dark_y, dark_x)
    bright_plain = one.many_siblings(bright_y, bright_x) & two.many_siblings(bright_y, bright_x)
    return np.asarray((zeroes <= 2) & (darkest != 0) & (brightest != 0) & (dark_plain | bright_plain))


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
    return "final" if step == FINAL_SHOT else int(step)


def compare_all(visual: VisualCheck, before: Mapping[str, bytes], after: Mapping[str, bytes]) -> list[VisualImages]:
    """Each of the PR's screenshots that the default branch also has, in step order (the final page last), compared."""
    found = []
    for step in sorted(after.keys() & before.keys(), key=lambda s: (s == FINAL_SHOT, int(s) if s != FINAL_SHOT else 0)):
        c = compare(before[step], after[step], visual.threshold)
        over = c.size_problem is not None or c.diff_ratio > visual.max_diff
        shot = VisualShot(step=step_key(step), diff_ratio=round(c.diff_ratio, 6), size_problem=c.size_problem, over=over)
        found.append(VisualImages(shot, after[step], before[step], c.diff_png))
    return found


def not_compared(before: Mapping[str, bytes], after: Mapping[str, bytes]) -> list[str]:
    """The PR's screenshots that the default branch has no counterpart for (a step its run did not replay)."""
    return sorted(after.keys() - before.keys())
