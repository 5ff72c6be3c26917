"""Prints what one expect.visual comparison of a 1280×800 pair costs (goal: under 0.1 s): the same page, a button
recoloured, and text moved by one pixel over a tenth of the page (many anti-aliased edges for pixelmatch's check)."""

from __future__ import annotations

import io
import statistics
import time

from PIL import Image, ImageDraw, ImageFilter, ImageOps

from preview_qa.verdict.checks.visual import compare

ROUNDS = 15
SIZE = (1280, 800)


def banner() -> Image.Image:
    """Photo-like content (blurred noise, tinted), made once: both pages of a pair show the same one."""
    noise = Image.effect_noise((1280, 260), 60).filter(ImageFilter.GaussianBlur(1.5))
    return ImageOps.colorize(noise, black=(20, 90, 40), white=(240, 230, 120))


BANNER = banner()
LINE = "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod " * 2


def page(button: str = "#2563eb", text_shift: int = 0) -> bytes:
    """A busy page: a photo-like banner, a button, and lines of text."""
    image = Image.new("RGB", SIZE, "white")
    image.paste(BANNER, (0, 0))
    draw = ImageDraw.Draw(image)
    draw.rounded_rectangle((80, 290, 260, 340), 8, fill=button)
    for row in range(14):
        x = 80 + (text_shift if row < 4 else 0)
        draw.text((x, 370 + row * 30), LINE, fill="#222")
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


def timed(before: bytes, after: bytes) -> tuple[float, float]:
    """The median seconds of one comparison, and the share of pixels it found different."""
    times, ratio = [], 0.0
    for _ in range(ROUNDS):
        start = time.perf_counter()
        ratio = compare(before, after).diff_ratio
        times.append(time.perf_counter() - start)
    return statistics.median(times), ratio


def main() -> None:
    base = page()
    for what, other in (
        ("the same page (the fast path)", page()),
        ("a button recoloured", page(button="#dc2626")),
        ("4 lines of text moved 1 px", page(text_shift=1)),
    ):
        seconds, ratio = timed(base, other)
        print(f"{what:34} {seconds * 1000:6.1f} ms  ({ratio:.2%} of pixels differ)")


if __name__ == "__main__":
    main()
