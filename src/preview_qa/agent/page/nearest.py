"""What a failing page check found instead: the visible line nearest the expected text, where an unwanted text is."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from preview_qa.results import clip, one_line

if TYPE_CHECKING:
    from playwright.async_api import Frame, Page

    from preview_qa.agent.page.shown import Hit, TextLook

RESEMBLES = 60  # rapidfuzz score (0-100) below which a line has too little in common with the text to be worth naming
LINE_LIMIT = 160
CONTEXT_LIMIT = 60
MAX_LINES = 5000  # a page longer than this is searched in its first lines only
LINES_SHOWN = 10  # when no line resembles the text: the page's first lines, to show what it did show


@dataclass(frozen=True)
class Nearest:
    """The best-matching visible line, the lines around it, and how alike it is (0-100)."""

    line: str
    before: str | None
    after: str | None
    score: float


def visible_lines(text: str) -> list[str]:
    """The page's rendered text (innerText) as non-empty lines, whitespace folded."""
    lines = (" ".join(line.split()) for line in text.splitlines())
    return [line for line in lines if line][:MAX_LINES]


def nearest_line(expected: str, lines: list[str]) -> Nearest | None:
    """The line most like `expected`, case ignored: a shorter line is compared whole, a longer one by its best-aligned
    part (so a long paragraph that contains a near copy still wins); None when no line resembles it."""
    from rapidfuzz import fuzz  # only a failing check looks for what the page showed instead

    want = " ".join(expected.split()).lower()
    best_index, best_score = -1, 0.0
    for index, line in enumerate(lines):
        candidate = line.lower()
        score = fuzz.ratio(want, candidate) if len(candidate) <= len(want) else fuzz.partial_ratio(want, candidate)
        if score > best_score:
            best_index, best_score = index, score
    if best_index < 0 or best_score < RESEMBLES:
        return None
    line = lines[best_index]
    return Nearest(
        line=_around(line, want, LINE_LIMIT),
        score=best_score,
        before=clip(lines[best_index - 1], CONTEXT_LIMIT) if best_index > 0 else None,
        after=clip(lines[best_index + 1], CONTEXT_LIMIT) if best_index + 1 < len(lines) else None,
    )


def describe_nearest(nearest: Nearest | None, lines: list[str]) -> str:
    """`'Cart total: 1 item(s)' (the closest visible line, after '…' and before '…')`, or why there is none and the
    page's first lines (`the page shows 4 line(s) of text: 'Acme', 'Home', ...`)."""
    if not lines:
        return "the page shows no visible text"
    if nearest is None:
        first = ", ".join(repr(clip(line, CONTEXT_LIMIT)) for line in lines[:LINES_SHOWN])
        which = f", the first {LINES_SHOWN}" if len(lines) > LINES_SHOWN else ""
        return f"no visible line resembles it (the page shows {len(lines)} line(s) of text{which}: {first})"
    around = [f"after {nearest.before!r}" if nearest.before else "", f"before {nearest.after!r}" if nearest.after else ""]
    where = " and ".join(a for a in around if a)
    return f"{nearest.line!r} (the closest visible line{', ' + where if where else ''})"


def frame_name(frame: Frame) -> str:
    """Where in the page a frame is, for a check's "found": nothing for the page itself, else the frame's URL."""
    return "" if frame.parent_frame is None else f" (in the frame at {frame.url})"


def found_instead_of_text(look: TextLook, text: str) -> str:
    """For a `text` check that failed: that it is in the page but no one can see it, and why (and in which frame), or
    the visible line nearest to it in any frame of the page, and which frame holds that line."""
    if look.why is not None:
        why, frame = look.why
        return f"it is in the page, but no one can see it: {why}{frame_name(frame)}"
    best: tuple[Nearest, Frame] | None = None
    shown: list[str] = []  # every frame's lines, the page's first
    for frame, lines in look.lines:
        lines = visible_lines("\n".join(lines))
        shown += lines
        near = nearest_line(text, lines)
        if near is not None and (best is None or near.score > best[0].score):
            best = (near, frame)
    if best is None:
        return describe_nearest(None, shown)
    return describe_nearest(best[0], shown) + frame_name(best[1])


def where_text_is(hit: Hit, text: str) -> str:
    """For a `not_text` check that failed: the line that shows the text, the element it is in, which frame, and in how
    many lines it is visible."""
    more = f", and {hit.count - 1} more place(s)" if hit.count > 1 else ""
    line = _around(hit.line, text.lower(), LINE_LIMIT)
    return f"it is visible in {line!r} (a <{hit.tag}> element{more}){frame_name(hit.frame)}"


async def found_url(page: Page) -> str:
    """For a `url` check that failed: the URL, and the title of the page at it."""
    return f"{page.url!r} (titled {clip(await _title(page), CONTEXT_LIMIT)!r})"


async def found_title(page: Page) -> str:
    """For a `title` check that failed: the title, and the URL that has it."""
    return f"{clip(await _title(page), LINE_LIMIT)!r} (on {page.url})"


async def _title(page: Page) -> str:
    try:
        return await page.title()
    except Exception:
        return ""


def _around(line: str, want: str, limit: int) -> str:
    """`line` if short enough, else the part of it around the best match for `want`, with ellipses where it was cut."""
    from rapidfuzz import fuzz  # only a failing check looks for what the page showed instead

    if len(line) <= limit:
        return line
    lowered = line.lower()
    match = fuzz.partial_ratio_alignment(want, lowered)
    start, end = (match.dest_start, match.dest_end) if match is not None else (0, 0)
    margin = max(0, (limit - (end - start)) // 2)
    left, right = max(0, start - margin), min(len(line), max(end + margin, start + limit - 2))
    return one_line(("…" if left else "") + line[left:right] + ("…" if right < len(line) else ""), limit + 2)
