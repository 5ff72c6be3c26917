"""Pure: a Playwright trace.zip given the test's own pictures as its film strip.

Tracing runs without Playwright's screencast (agent/evidence/tracing.py): Chromium encoded a frame at every repaint of
every traced page, about a third of an agent run's CPU, for traces that retain-on-failure then mostly threw away. The
trace viewer's film strip instead shows the pictures the test already took (each step's, the filled-in form's, the
final page's), as `screencast-frame` events at the moments they were taken, added only to a trace that is written.
"""

from __future__ import annotations

import io
import json
import zipfile

from preview_qa.reporters.output.images import trace_frame

FRAMES_PAGE = "page@preview-qa-pictures"  # the lane of a trace that names no page of its own


def with_film_strip(trace: bytes, pictures: list[tuple[float, bytes]]) -> bytes:
    """`trace` with each picture (when it was taken, in seconds since the epoch; a PNG) as a screencast frame of the
    test's first page, in the order they were taken. A trace without its context's clock (its first event, whose
    wall and monotonic times place the pictures) or a picture Pillow cannot read is left out as it is."""
    if not pictures:
        return trace
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(trace)) as source:
        name = next((n for n in source.namelist() if n.endswith(".trace")), None)
        events = source.read(name).decode("utf-8").splitlines() if name is not None else []
        clock = json.loads(events[0]) if events else {}
        if clock.get("type") != "context-options" or not clock.get("wallTime"):
            return trace
        page = next((e["params"]["pageId"] for e in map(json.loads, events) if e.get("method") == "page"), FRAMES_PAGE)
        added: dict[str, bytes] = {}
        for n, (at, png) in enumerate(sorted(pictures, key=lambda p: p[0])):
            try:
                jpeg, width, height = trace_frame(png)
            except (OSError, ValueError):
                continue
            file = f"screencast/{page}-preview-qa-{n:03d}.jpeg"
            added[file] = jpeg
            at_ms = at * 1000
            frame = {"type": "screencast-frame", "pageId": page, "file": file, "width": width, "height": height}
            frame |= {"timestamp": clock["monotonicTime"] + at_ms - clock["wallTime"], "frameSwapWallTime": at_ms}
            events.append(json.dumps(frame))
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
            for entry in source.infolist():
                body = ("\n".join(events) + "\n").encode("utf-8") if entry.filename == name else source.read(entry)
                target.writestr(entry.filename, body)
            for file, jpeg in added.items():
                target.writestr(file, jpeg, zipfile.ZIP_STORED)  # already compressed
    return out.getvalue()
