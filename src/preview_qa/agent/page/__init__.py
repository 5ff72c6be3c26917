"""What is read from the live page: the page checks (url, title, text, states) and the visible text nearest a failing one."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from playwright.async_api import BrowserContext, Page


def every_page(context: BrowserContext, watch: Callable[[Page], None]) -> None:
    """`watch` on each page of a test's context: those it has now and those it opens later (tabs, popups)."""
    context.on("page", watch)
    for page in context.pages:
        watch(page)
