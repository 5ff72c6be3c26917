"""expect.links on the live final page: the links a person could follow to the app's own pages, each requested through
the test's browser context (its cookies; the test's credentials to the app's origin alone; a redirect followed only
while it stays there), as plain facts for the verdict (verdict/checks/problems.py)."""

from __future__ import annotations

import asyncio
import re
import time
from typing import TYPE_CHECKING
from urllib.parse import urljoin, urlsplit

from preview_qa.engine.preview import origin_of
from preview_qa.results import error_line, one_line
from preview_qa.verdict.agent_run import LinkAnswer

if TYPE_CHECKING:
    from playwright.async_api import APIRequestContext, Page

LINKS_CHECKED = 50  # the final page's first distinct same-origin links; the rest are not requested
LINKS_AT_ONCE = 6
LINK_TIMEOUT_S = 10.0  # each link's answer, at most (and never past the test's deadline)
MAX_HOPS = 5  # redirects followed on the app's origin
TEXT_LIMIT = 80
# A sign-out link ends the session it is requested with: on the server too, where a saved login other tests start from
# would end with it.
SIGN_OUT = re.compile(r"\b(?:log|sign)[\s_-]?(?:out|off)\b", re.IGNORECASE)
# Every a[href] a person could follow: rendered (not display:none, nor inside such a parent), with its text.
_LINKS = """() => [...document.querySelectorAll('a[href]')]
  .filter(a => a.checkVisibility())
  .slice(0, 2000)
  .map(a => ({href: a.href, text: (a.innerText || a.getAttribute('aria-label') || a.title
    || (a.querySelector('img[alt]') || {}).alt || '').replace(/\\s+/g, ' ').trim().slice(0, 200)}))"""


def same_origin_links(found: list[dict[str, str]], origin: str, here: str) -> list[tuple[str, str]]:
    """(path and query, text) of each distinct link to `origin`, in page order, at most LINKS_CHECKED, without sign-out
    links nor those to a place on the page `here` itself (#top)."""
    links: dict[str, str] = {}
    on = urlsplit(here)
    for link in found:
        href, text = str(link.get("href", "")), one_line(str(link.get("text", "")), TEXT_LIMIT)
        parts = urlsplit(href)
        if parts.scheme not in ("http", "https") or origin_of(href) != origin:
            continue
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        in_place = parts.fragment and (parts.path, parts.query) == (on.path, on.query)
        if in_place or SIGN_OUT.search(parts.path) or SIGN_OUT.search(text) or path in links:
            continue
        links[path] = text
        if len(links) == LINKS_CHECKED:
            break
    return list(links.items())


async def request_links(page: Page, origin: str, credentials: dict[str, str], deadline: float) -> list[LinkAnswer]:
    """The final page's same-origin links, each requested (GET, a few at once) before `deadline` (monotonic)."""
    found = await page.main_frame.evaluate(_LINKS)
    links = same_origin_links(found, origin, page.url)
    limit = asyncio.Semaphore(LINKS_AT_ONCE)
    request = page.context.request

    async def answer(path: str, text: str) -> LinkAnswer:
        async with limit:
            return await _answer(request, origin + path, LinkAnswer(path, text), origin, credentials, deadline)

    return list(await asyncio.gather(*(answer(path, text) for path, text in links)))


async def _answer(
    request: APIRequestContext, url: str, link: LinkAnswer, origin: str, credentials: dict[str, str], deadline: float
) -> LinkAnswer:
    """What `url` answers, its redirects followed while they stay on `origin` (a redirect elsewhere is its answer)."""
    from playwright.async_api import TimeoutError as PlaywrightTimeoutError  # as every room here: loaded when used

    for _ in range(MAX_HOPS + 1):
        left = min(LINK_TIMEOUT_S, deadline - time.monotonic())
        if left <= 0:
            return LinkAnswer(link.path, link.text, failure="was not requested: the test's time ran out")
        try:
            response = await request.get(
                url, headers=credentials, max_redirects=0, timeout=left * 1000, fail_on_status_code=False
            )
        except PlaywrightTimeoutError:
            return LinkAnswer(link.path, link.text, failure=f"did not answer within {left:.0f} s")
        except Exception as e:
            return LinkAnswer(link.path, link.text, failure=f"could not be requested: {error_line(e, 160)}")
        status, location = response.status, response.headers.get("location")
        await response.dispose()
        if status not in range(300, 400) or not location or origin_of(urljoin(url, location)) != origin:
            return LinkAnswer(link.path, link.text, status=status)
        url = urljoin(url, location)
    return LinkAnswer(link.path, link.text, failure=f"redirected more than {MAX_HOPS} times")
