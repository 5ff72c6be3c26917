"""Fixture pages with twins (/twins/...): elements of the same role and name that only their place tells apart, as
docs sites and pricing pages have them — the same link in the navbar and the footer, a button in each of two cards,
a copy button on each line of a list. The page each leads to says which one was used."""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import parse_qs, urlsplit

PREFIX = "/twins/"

_HOME = """<header><nav aria-label=Main><a href="/twins/tutorial?from=navbar">Tutorial</a>
<a href="/twins/">Docs</a></nav></header>
<main><h1>Docs</h1>
<article data-testid=plan-free><h2>Free</h2><button type=button data-says="You chose Free">Choose</button></article>
<article data-testid=plan-pro><h2>Pro</h2><button type=button id=choose-pro data-says="You chose Pro">Choose</button></article>
<ul><li><code>npm init</code> <button type=button data-says="Copied: npm init">Copy</button></li>
<li><code>npm start</code> <button type=button id=copy-start data-says="Copied: npm start">Copy</button></li></ul>
<p id=said role=status></p></main>
<footer><h2>Learn</h2><a id=footer-tutorial href="/twins/tutorial?from=footer">Tutorial</a></footer>"""
_SAYS = """document.querySelectorAll('button[data-says]').forEach(function (b) {
  b.onclick = function () { document.getElementById('said').textContent = b.dataset.says; };
});"""
_FROM = {"navbar": "Opened from the navbar", "footer": "Opened from the footer"}


def reply(url: str, page: Callable[..., bytes]) -> tuple[int, bytes]:
    """The answer to a GET under /twins/: the docs home, or the tutorial saying which link opened it."""
    path = urlsplit(url).path.removeprefix(PREFIX)
    if path == "":
        return 200, page("Docs - Acme", _HOME, script=_SAYS)
    if path == "tutorial":
        came = (parse_qs(urlsplit(url).query).get("from") or [""])[0]
        return 200, page("Tutorial - Acme", f"<h1>Tutorial</h1><p>{_FROM.get(came, 'Opened directly')}</p>")
    return 404, b"<h1>Not Found</h1>"
