"""Screenshots taken to be compared with the default branch's (expect.visual): full size, fonts loaded, animations
and the caret frozen, the test's `mask` selectors painted over and its secrets masked, so that the same page gives
the same pixels every time."""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

from preview_qa.agent.guards import masking
from preview_qa.manifest.models import VisualCheck

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
