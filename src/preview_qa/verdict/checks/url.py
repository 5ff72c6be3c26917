"""Pure: an `expect.url` that held where the test (or its step) began only as a part of that page's URL (/admin/ of
/admin/login/), on a page it is still on at the end, cannot fail: it fails, saying so. `url` is "the URL contains",
and a failed sign-in stays on its page: Django's admin login at /admin/login/ contains the /admin/ a successful one
leads to, and a wrong password passed. A url naming the page it began on (/search, for a test that stays there) says
what it means and is left alone."""

from __future__ import annotations

from urllib.parse import urldefrag, urlsplit

from preview_qa.results import ExpectationOutcome


def unmoved(outcomes: list[ExpectationOutcome], expected: str | None, began: str, ended: str) -> list[ExpectationOutcome]:
    """`outcomes` with a url check that passed only because the page never left `began` (the URL its test or step
    started on, which already contained `expected`) turned into a failure that says why and what to write instead."""
    if expected is None or not held_only_as_part(expected, began) or urldefrag(began).url != urldefrag(ended).url:
        return outcomes
    why = (
        f"{ended}, the page it began on: that URL already contained {expected!r} before anything was done, so this "
        "check cannot fail; expect a URL only the result has (one the page it began on does not contain) or a text"
    )
    return [
        o.model_copy(update={"ok": False, "found": why, "timeout_s": None}) if o.check == "url" and o.ok else o for o in outcomes
    ]


def held_only_as_part(expected: str, began: str) -> bool:
    """Whether `began` (a URL or a path) contains `expected` without `expected` naming it: a url check that holds there
    before anything is done, and so fails when the page never leaves it."""
    return expected in began and not _names(expected, began)


def _names(expected: str, url: str) -> bool:
    """Whether `expected` is the whole of `url`, its path or its path and query (a trailing slash aside)."""
    parts = urlsplit(urldefrag(url).url)
    query = f"{parts.path}?{parts.query}" if parts.query else parts.path
    return expected.rstrip("/") in {u.rstrip("/") for u in (urldefrag(url).url, parts.path, query)}
