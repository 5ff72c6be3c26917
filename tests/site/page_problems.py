"""Fixture pages with problems a person might not notice (/problems/...), for expect.console_errors, expect.requests
and expect.links: a page that logs an error, one that throws on load, one whose image and metrics call fail, one with a
broken link among working, hidden, sign-out and off-site ones; and a clean page with none of them. The about page
logs an error once the test gives the signal BREAK (a release that broke it after its recording)."""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import urlsplit

PREFIX = "/problems/"
HELP_ERROR = "help widget failed to start"
BREAK = "problems-about-breaks"
ABOUT_ERROR = "team widget failed to load"
SVG = b'<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>'

_NAV = """<nav><a href="/problems/clean">Home</a> <a href="/problems/about?tab=team">About</a>
<a href="/problems/moved">Old home</a> <a href="/problems/logout">Sign out</a>
<a href="{other}/problems/team">Partner</a> <a href="#top">Top</a></nav>"""
_PAGES = {
    "clean": ("Clean - Acme", "<h1>All good</h1><img src=/problems/logo.svg alt=Logo>", ""),
    "about": ("About - Acme", "<h1>About</h1>", ""),
    "console": ("Help - Acme", "<h1>Help</h1>", f"console.error({HELP_ERROR!r});"),
    "throws": ("Cart - Acme", "<h1>Cart</h1>", "window.cartTotals.render();"),
    "broken-image": (
        "Products - Acme",
        "<h1>Products</h1><img src=/problems/img/anvil.png alt=Anvil>",
        "fetch('/problems/api/metrics');",
    ),
    "links": (
        "Links - Acme",
        '<h1>Links</h1><a href="/problems/team">Team</a><a href="/problems/old-team" style="display:none">Old team</a>',
        "",
    ),
}


def reply(url: str, other: str, page: Callable[..., bytes], broken: bool) -> tuple[int, bytes, dict[str, str], str]:
    """The answer to a request under /problems/ (status, body, headers, content type); `other` is another origin's base
    URL, for the off-site link; `broken`: BREAK was given."""
    path = urlsplit(url).path.removeprefix(PREFIX)
    html = "text/html; charset=utf-8"
    if path in _PAGES:
        title, body, script = _PAGES[path]
        script = f"console.error({ABOUT_ERROR!r});" if path == "about" and broken else script
        return 200, page(title, _NAV.format(other=other) + body, script=script), {}, html
    if path == "logo.svg":
        return 200, SVG, {}, "image/svg+xml"
    if path == "moved":
        return 302, b"", {"Location": "/problems/clean"}, html
    if path == "api/metrics":
        return 404, b'{"error": "no metrics here"}', {}, "application/json"
    return 404, b"<h1>Not Found</h1>", {}, html
