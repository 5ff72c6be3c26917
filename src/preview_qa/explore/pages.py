"""Which pages `explore` sweeps: the ones given (changed routes), else the preview's sitemap.xml, else its same-origin
links breadth-first from `/`, read over HTTP with the preview's headers (a page is its path and query, never another
origin's; one query of each path: a table sorted three ways is one page), at most `limit`."""

from __future__ import annotations

import re
from collections.abc import Iterable
from html.parser import HTMLParser
from urllib.parse import urljoin, urlsplit

import httpx

_LOC = re.compile(r"<loc>\s*([^<\s]+)\s*</loc>", re.IGNORECASE)
_SKIPPED = re.compile(r"\.(?:png|jpe?g|gif|svg|webp|ico|pdf|zip|gz|css|js|json|xml|txt|csv|tsv|woff2?|mp4|mp3)$", re.IGNORECASE)


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        href = dict(attrs).get("href") if tag == "a" else None
        if href:
            self.hrefs.append(href)


def page_of(url: str, base_url: str) -> str | None:
    """`url`'s path and query when it is a page of the preview (same origin, not a file such as an image); else None."""
    full, base = urlsplit(urljoin(base_url, url)), urlsplit(base_url)
    if (full.scheme, full.netloc) != (base.scheme, base.netloc) or _SKIPPED.search(full.path):
        return None
    return (full.path or "/") + (f"?{full.query}" if full.query else "")


def links_in(html: str, url: str, base_url: str) -> list[str]:
    """The preview's pages a document links to, in order, once each."""
    parser = _Links()
    parser.feed(html)
    return list(dict.fromkeys(p for href in parser.hrefs if (p := page_of(urljoin(url, href), base_url))))


async def discover(base_url: str, headers: dict[str, str], limit: int, given: Iterable[str] = ()) -> tuple[list[str], list[str]]:
    """The pages to sweep, and notes on what was left out. Given pages first (each page they link to after them),
    then the sitemap's, then links breadth-first from `/`."""
    notes: list[str] = []
    async with httpx.AsyncClient(headers=headers, follow_redirects=True, timeout=15.0) as client:
        start = [p for g in given if (p := page_of(g, base_url))]
        if not start:
            start = await _sitemap(client, base_url) or ["/"]
        found = list(dict.fromkeys(start))
        queue, paths, variants = list(found), {urlsplit(p).path for p in found}, 0
        while queue and len(found) < limit:
            page = queue.pop(0)
            try:
                answer = await client.get(urljoin(base_url, page))
            except httpx.HTTPError as e:
                notes.append(f"{page} could not be read for its links ({type(e).__name__})")
                continue
            if answer.status_code >= 400:  # not a page to sweep: the page linking to it has the broken link
                found.remove(page)
                notes.append(f"{page} answered {answer.status_code} on the preview: not swept")
                continue
            if "html" not in answer.headers.get("content-type", ""):
                continue
            for link in links_in(answer.text, str(answer.url), base_url):
                path = urlsplit(link).path
                if link not in found and path not in paths:
                    paths.add(path)
                    found.append(link)
                    queue.append(link)
                elif link not in found:
                    variants += 1
    if variants:
        notes.append(f"{variants} link(s) to a page already swept with another query: not swept")
    if len(found) > limit:
        notes.append(
            f"{len(found) - limit} more page(s) found than --max-pages={limit}: not swept ({', '.join(found[limit:][:5])}…)"
        )
    return found[:limit], notes


async def _sitemap(client: httpx.AsyncClient, base_url: str) -> list[str]:
    """The pages /sitemap.xml lists on the preview's origin (none when it has no sitemap)."""
    try:
        answer = await client.get(urljoin(base_url, "/sitemap.xml"))
    except httpx.HTTPError:
        return []
    if answer.status_code != 200:
        return []
    # a preview's sitemap often names the production host: its paths are the preview's pages
    paths = (urlsplit(loc)._replace(scheme="", netloc="").geturl() or "/" for loc in _LOC.findall(answer.text))
    return list(dict.fromkeys(p for path in paths if (p := page_of(path, base_url))))
