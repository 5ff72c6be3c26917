"""expect.appeared and expect.not_appeared: whether a text showed at some moment after the last action that changed
the page, told by two watchers at once: the record of what the pages showed (agent/page/sightings.py: a toast that came
and went before the checks began, across a navigation too) and the page itself, looked at by the text checks' own call
in each frame (agent/page/shown.py), the check's one Playwright call in the trace."""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from preview_qa.agent.page.shown import Hit, look_for_text

if TYPE_CHECKING:
    from playwright.async_api import Page

    from preview_qa.agent.page.sightings import Sighting, Sightings


@dataclass(frozen=True)
class Appearance:
    """What the watch saw: the line the record kept (from when, until when), else the page's own line that showed it
    (a frame whose watcher could not be installed), else nothing; and how long it watched."""

    sighting: Sighting | None
    hit: Hit | None
    waited_s: float

    @property
    def seen(self) -> bool:
        return self.sighting is not None or self.hit is not None


async def appeared(page: Page, sightings: Sightings, text: str, wait: float) -> Appearance:
    """expect.appeared: `text` showed after the mark, or shows within `wait` seconds. When the record already has it,
    the page is looked at once, without waiting."""
    start = time.monotonic()
    await sightings.look()
    already = sightings.shown_since(text, sightings.marked_at) is not None
    return await _watch(page, sightings, text, 0.0 if already else wait, start)


async def not_appeared(page: Page, sightings: Sightings, text: str, window: float, wait: float) -> Appearance:
    """expect.not_appeared: watched until `window` seconds after the mark (at most `wait` from now); the first sighting
    ends the watch."""
    start = time.monotonic()
    left = min(wait, max(0.0, sightings.marked_at + window - time.time()))
    return await _watch(page, sightings, text, left, start)


async def _watch(page: Page, sightings: Sightings, text: str, wait: float, start: float) -> Appearance:
    """Until the record or the page shows `text`, or `wait` has passed; then the record brought up to date."""
    record = asyncio.ensure_future(sightings.seen(text, time.monotonic() + wait))
    look = asyncio.ensure_future(look_for_text(page, text, wait, shown=True))
    try:
        done, _ = await asyncio.wait({record, look}, return_when=asyncio.FIRST_COMPLETED)
        if not (record in done and record.result() is not None) and not (look in done and look.result().hit is not None):
            await asyncio.wait({record, look})  # one ended seeing nothing: the other ends by the same bound
    finally:
        for task in (record, look):
            task.cancel()
    hit = None
    if look.done() and not look.cancelled():
        with contextlib.suppress(Exception):
            hit = look.result().hit
    await sightings.look()
    sighting = sightings.shown_since(text, sightings.marked_at)
    return Appearance(sighting, None if sighting is not None else hit, round(time.monotonic() - start, 2))
