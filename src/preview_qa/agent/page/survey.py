"""What a route's page really shows, read for `preview-qa plan` (issue #39): its URL, title, headings, accessibility
tree (roles and names, as Playwright's aria snapshot gives them), visible text and the links on it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from preview_qa.agent.page.settle import PageSettler

if TYPE_CHECKING:
    from playwright.async_api import Page

TEXT_LIMIT = 4_000  # characters of visible text and of the aria snapshot each: a page's gist, ~1k tokens apiece
SETTLE_S = 5.0  # at most, for a page still loading its content after `load`
_LINKS = "() => [...document.querySelectorAll('a[href]')].map(a => a.href)"
_HEADINGS = "() => [...document.querySelectorAll('h1, h2, h3')].map(h => h.innerText.trim()).filter(Boolean)"


@dataclass(frozen=True)
class PageFacts:
    """One page as the drafting LLM is shown it; `status` is the HTTP status of its document (None: not answered)."""

    url: str
    status: int | None
    title: str = ""
    headings: list[str] = field(default_factory=list)
    aria: str = ""
    text: str = ""
    links: list[str] = field(default_factory=list)


async def survey(page: Page, url: str, timeout_s: float = 15.0) -> PageFacts:
    """Open `url` in `page` (its context already guarded by the run's request policy), let it settle, read it."""
    settler = PageSettler()
    settler.attach(page.context)  # before the page loads: settling follows its requests from the first
    response = await page.goto(url, wait_until="load", timeout=timeout_s * 1000)
    await settler.settle(page, SETTLE_S)
    body = page.locator("body")
    return PageFacts(
        url=page.url,
        status=response.status if response else None,
        title=await page.title(),
        headings=list(await page.evaluate(_HEADINGS)),
        aria=(await body.aria_snapshot(timeout=timeout_s * 1000))[:TEXT_LIMIT],
        text=" ".join((await body.inner_text(timeout=timeout_s * 1000)).split())[:TEXT_LIMIT],
        links=list(dict.fromkeys(await page.evaluate(_LINKS))),
    )
