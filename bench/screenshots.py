"""Prints what shrinking a busy page's screenshot and building run.gif cost (time, bytes), and a 20-test run's size."""

from __future__ import annotations

import asyncio
import io
import os
import tempfile
import time
from pathlib import Path

from PIL import Image, ImageFilter, ImageOps

from preview_qa.agent.browsers.chromium import find_chromium
from preview_qa.reporters.output.images import animation, shrink_screenshot

TESTS, STEPS, ROUNDS = 20, 20, 10


def photo(seed: int) -> Image.Image:
    """Photo-like content: blurred noise tinted over a gradient (plain noise would be unrealistically incompressible)."""
    noise = Image.effect_noise((420, 300), 60 + seed).filter(ImageFilter.GaussianBlur(1.5))
    tint = ImageOps.colorize(noise, black=(20, 90 + 20 * seed, 40), white=(240, 230, 120))
    return Image.blend(tint, Image.radial_gradient("L").resize((420, 300)).convert("RGB"), 0.25)


def page(folder: Path) -> str:
    for i in range(3):
        photo(i).save(folder / f"p{i}.jpg", quality=85)
    cards = "".join('<span class="card"></span>' for _ in range(4))
    text = "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore. " * 4
    (folder / "page.html").write_text(
        "<!doctype html><style>body{font-family:sans-serif;margin:0;background:linear-gradient(135deg,#fde,#def)}"
        ".card{display:inline-block;width:280px;height:150px;margin:8px;border-radius:12px;"
        "background:radial-gradient(circle,#f90,#09f);box-shadow:0 4px 12px #0006}p{margin:1rem;max-width:70rem}</style>"
        f"<h1>A busy shop page</h1>{''.join(f'<img src=p{i}.jpg>' for i in range(3))}<p>{text}</p><div>{cards}</div>"
        f"<p>{text}</p>" * 8,
        encoding="utf-8",
    )
    return (folder / "page.html").as_uri()


async def screenshots(url: str, count: int) -> list[bytes]:
    """The page scrolled a little further for each shot, so that no two animation frames are alike."""
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=find_chromium(None, os.environ))
        tab = await browser.new_page(viewport={"width": 1280, "height": 800})
        await tab.goto(url)
        shots = []
        for i in range(count):
            await tab.evaluate(f"window.scrollTo(0, {i * 40})")
            shots.append(await tab.screenshot())
        await browser.close()
        return shots


def timed(fn, *args):  # type: ignore[no-untyped-def]
    fn(*args)
    start = time.perf_counter()
    for _ in range(ROUNDS):
        out = fn(*args)
    return out, (time.perf_counter() - start) / ROUNDS * 1000


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        pngs = asyncio.run(screenshots(page(Path(folder)), STEPS))
    png = pngs[0]
    small, shrink_ms = timed(shrink_screenshot, png)
    gif, gif_ms = timed(animation, [shrink_screenshot(p) for p in pngs])
    width = Image.open(io.BytesIO(small)).width
    print(f"screenshot as taken: {len(png) / 1024:.0f} KB (1280x800)")
    print(f"shrunk:              {len(small) / 1024:.0f} KB ({width} px wide) in {shrink_ms:.0f} ms")
    print(f"run.gif of {STEPS} steps:  {len(gif) / 1024:.0f} KB in {gif_ms:.0f} ms")
    for steps in (STEPS // 2, STEPS):
        frames = [shrink_screenshot(p) for p in pngs[:steps]]
        total = TESTS * ((steps + 1) * len(small) + len(animation(frames) or b"")) / 1024**2
        unshrunk = TESTS * (steps + 1) * len(png) / 1024**2
        print(f"{TESTS} tests x {steps} steps of such pages: {total:.0f} MB of images ({unshrunk:.0f} MB unshrunk)")


if __name__ == "__main__":
    main()
