"""Reading images as a person would: tesseract's text of a screenshot, for the tests that no secret is in any pixel."""

from __future__ import annotations

import io
import os
import subprocess
import tempfile

from PIL import Image


def ocr(png: bytes) -> str:
    """Tesseract's reading of an image, scaled up 3x first so that small GIF frames are read as well as screenshots."""
    image = Image.open(io.BytesIO(png)).convert("L")
    image = image.resize((image.width * 3, image.height * 3), Image.Resampling.LANCZOS)
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "image.png")
        image.save(path)
        done = subprocess.run(["tesseract", path, "-", "--psm", "11"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.lower()
