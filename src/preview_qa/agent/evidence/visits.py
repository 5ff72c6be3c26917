"""The pages a test's run loaded: every document its main frames asked for (each hop of a redirect among them) and
every URL they came to (the final one, and a single-page app's own navigations), kept with its recording so that
`run --impacted` knows which routes the test visits."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from preview_qa.agent.page import every_page

if TYPE_CHECKING:
    from playwright.async_api import BrowserContext, Frame, Page, Request


class Visits:
    """Listens to a test's context from its first page on; `urls` in the order they were first seen."""

    def __init__(self) -> None:
        self._seen: dict[str, None] = {}

    @property
    def urls(self) -> list[str]:
        return list(self._seen)

    def attach(self, context: BrowserContext) -> None:
        every_page(context, self._watch)

    def _watch(self, page: Page) -> None:
        page.on("request", self._on_request)
        page.on("framenavigated", self._on_navigated)

    def _on_request(self, request: Request) -> None:
        with contextlib.suppress(Exception):  # a service worker's request has no frame
            if request.resource_type == "document" and request.frame.parent_frame is None:
                self._add(request.url)

    def _on_navigated(self, frame: Frame) -> None:
        if frame.parent_frame is None:
            self._add(frame.url)

    def _add(self, url: str) -> None:
        if url.startswith(("http://", "https://")):
            self._seen.setdefault(url, None)
