"""Screenshots taken to be compared with the default branch's (expect.visual): full size, fonts loaded, animations
and the caret frozen, the test's `mask` selectors painted over and its secrets masked, so that the same page gives
the same pixels every time."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from preview_qa.agent.evidence.timing import Phases
from preview_qa.agent.guards import masking
from preview_qa.events import Observed
from preview_qa.manifest.models import VisualCheck
from preview_qa.results import error_line

if TYPE_CHECKING:
    from playwright.async_api import Page

FONTS_WAIT_S = 5.0
MASK_COLOUR = "#FF00FF"  # Playwright's own: a painted-out box reads as one at a glance


async def comparison_shot(page: Page, mask: masking.Mask, visual: VisualCheck, timeout_s: float) -> bytes:
    """The page as it is compared: one pixel a CSS pixel, in the test's (or the recording's) own viewport and device."""
    with contextlib.suppress(Exception):  # a page that never finishes loading its fonts is still photographed
        await asyncio.wait_for(page.evaluate("document.fonts.ready.then(() => true)"), FONTS_WAIT_S)
    return await masking.screenshot(
        page,
        mask,
        animations="disabled",  # finite ones end, infinite ones go back to their start
        caret="hide",
        full_page=visual.full_page,
        mask=[page.locator(selector) for selector in visual.mask],
        mask_color=MASK_COLOUR,
        timeout=timeout_s * 1000,
    )


class ComparisonShots:
    """One test's screenshots to compare, by step ("final", "3"), each of the settled page, into `shots`; one that
    cannot be taken is said (an event), and stays uncompared."""

    def __init__(
        self,
        test: str,
        visual: VisualCheck,
        mask: masking.Mask,
        settle: Callable[[Page], Awaitable[Any]],
        phases: Phases,
        emit: Callable[[Observed], None],
        shots: dict[str, bytes],
    ):
        self.test, self.visual, self.mask, self.settle, self.phases, self.emit = test, visual, mask, settle, phases, emit
        self.shots = shots

    async def take(self, page: Page, step: str, timeout_s: float) -> None:
        try:
            with self.phases(f"screenshot to compare ({step})"):
                await self.settle(page)
                self.shots[step] = await comparison_shot(page, self.mask, self.visual, timeout_s)
        except Exception as e:
            reason = f"no screenshot to compare at {step}: {type(e).__name__}: {error_line(e)}"
            self.emit(Observed(name=self.test, kind="visual_not_compared", error=True, detail={"reason": reason}))
