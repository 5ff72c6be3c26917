"""What is read from the live page: the page checks (url, title, text, states) and the visible text nearest a failing one;
here, what its watchers share: every page of a context, and every open shadow root of a document (roots.js)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from importlib import resources
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from playwright.async_api import BrowserContext, Page


def every_page(context: BrowserContext, watch: Callable[[Page], None]) -> None:
    """`watch` on each page of a test's context: those it has now and those it opens later (tabs, popups)."""
    context.on("page", watch)
    for page in context.pages:
        watch(page)


@functools.cache
def roots() -> str:
    """The factory of roots.js, a JavaScript expression: `(roots())(onChange, options)` observes the document and its
    open shadow roots with `options` and returns `sweep`, which watches the roots attached since and says whether it
    found one."""
    return resources.files(__package__).joinpath("roots.js").read_text(encoding="utf-8")
