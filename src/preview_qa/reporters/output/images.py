"""Screenshot shrinking and the run animation (Pillow): pure functions, called off the event loop."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from PIL import Image

KEEP_BYTES = 150_000  # a PNG this small (a plain page) is kept as the browser made it
SCREENSHOT_WIDTH = 960  # 3/4 of the 1280 px viewport: text stays readable
GIF_WIDTH = 400
GIF_MAX_FRAMES = 30
FRAME_MS = 1000
LAST_FRAME_MS = 3000
TRACE_FRAME_WIDTH = 800  # Playwright's own screencast frames: 800 px on the longer side, JPEG at 90
TRACE_FRAME_QUALITY = 90


def shrink_screenshot(png: bytes) -> bytes:
    """A busy page's screenshot at most SCREENSHOT_WIDTH wide with a 256-colour palette: about 1/6 of the bytes.

    Measured on a 1280x800 page with photos and gradients: 728 KB -> 110 KB in about 50 ms (bench/screenshots.py).
    """
    if len(png) <= KEEP_BYTES:
        return png
    from PIL import Image  # on the writer thread, when the first busy page comes: not on the run's way to its tests

    with Image.open(io.BytesIO(png)) as image:
        small = _fit(image.convert("RGB"), SCREENSHOT_WIDTH)
    out = io.BytesIO()
    small.quantize(256, method=Image.Quantize.FASTOCTREE).save(out, "PNG")
    return out.getvalue() if out.tell() < len(png) else png


def trace_frame(png: bytes) -> tuple[bytes, int, int]:
    """A picture as a trace viewer's film-strip frame: a JPEG at most TRACE_FRAME_WIDTH wide, as Playwright's own
    screencast frames are, with the picture's own size (the viewer's aspect ratio)."""
    from PIL import Image

    with Image.open(io.BytesIO(png)) as image:
        size = image.size
        small = _fit(image.convert("RGB"), TRACE_FRAME_WIDTH)
    out = io.BytesIO()
    small.save(out, "JPEG", quality=TRACE_FRAME_QUALITY)
    return out.getvalue(), *size


def animation(frames: list[bytes]) -> bytes | None:
    """A looping GIF of the screenshots, GIF_WIDTH wide, one second a frame and the last one held longer;
    None when fewer than two of them are images Pillow can read."""
    from PIL import Image

    if len(frames) > GIF_MAX_FRAMES:  # evenly spaced, always keeping the first and the last
        step = (len(frames) - 1) / (GIF_MAX_FRAMES - 1)
        frames = [frames[round(i * step)] for i in range(GIF_MAX_FRAMES)]
    images: list[Image.Image] = []
    for png in frames:
        try:
            with Image.open(io.BytesIO(png)) as image:
                frame = _fit(image.convert("RGB"), GIF_WIDTH)
        except (OSError, ValueError):  # a screenshot kept as taken because Pillow could not read it
            continue
        if images and frame.size != images[0].size:  # GIF frames share one canvas
            frame = frame.resize(images[0].size, Image.Resampling.BILINEAR)
        images.append(frame.quantize(256, method=Image.Quantize.FASTOCTREE))
    if len(images) < 2:
        return None
    out = io.BytesIO()
    images[0].save(
        out,
        "GIF",
        save_all=True,
        append_images=images[1:],
        loop=0,
        duration=[FRAME_MS] * (len(images) - 1) + [LAST_FRAME_MS],
        disposal=1,
    )
    return out.getvalue()


def _fit(image: Image.Image, width: int) -> Image.Image:
    from PIL import Image

    if image.width <= width:
        return image
    height = max(1, round(image.height * width / image.width))
    return image.resize((width, height), Image.Resampling.BILINEAR, reducing_gap=2.0)
