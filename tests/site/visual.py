"""Fixture pages for expect.visual (/visual/...): the last release (`production`) and this pull request's differ in
one button's colour; an about page the same in both; a ticking clock; a three-page wizard whose last page changed."""

from __future__ import annotations

from collections.abc import Callable

PREFIX = "/visual/"
BLUE, RED = "#2563eb", "#dc2626"  # the last release's button, this pull request's

Page = Callable[..., bytes]  # the site's own _page(title, body, script=...)


def _button(label: str, colour: str, href: str = "#") -> str:
    style = f"background:{colour};color:#fff;border:0;padding:.6rem 1.4rem;border-radius:.4rem;text-decoration:none"
    return f'<a role=button href="{href}" style="{style}">{label}</a>'


def _pages(production: bool) -> dict[str, tuple[str, str, str]]:
    """name -> (title, body, script) of each page, in the release asked for."""
    colour = BLUE if production else RED
    return {
        "about": ("About - Acme", "<h1>About Acme</h1><p>Anvils since 1949.</p>" + _button("Contact us", BLUE), ""),
        "shop": ("Shop - Acme", "<h1>Anvils</h1><p>The classic anvil, $99.</p>" + _button("Buy now", colour), ""),
        "clock": (
            "Clock - Acme",
            "<h1>Status</h1><p>All systems normal.</p><p>Server time: <span id=clock>0</span></p>",
            # the time at once, then every 50 ms: a page photographed before its first tick showed "0", a narrower
            # box for the mask than the 13 digits of every later shot
            "var tick = function () { document.getElementById('clock').textContent = Date.now(); };"
            " tick(); setInterval(tick, 50);",
        ),
        "wizard": ("Wizard - Acme", "<h1>Your order</h1><p>One anvil.</p>" + _button("Next", BLUE, "/visual/shipping"), ""),
        "shipping": ("Shipping - Acme", "<h1>Shipping</h1><p>Free.</p>" + _button("Next", BLUE, "/visual/pay"), ""),
        "pay": ("Pay - Acme", "<h1>Payment</h1><p>Total: $99.</p>" + _button("Pay now", colour), ""),
    }


def reply(path: str, production: bool, page: Page) -> tuple[int, bytes]:
    """The status and HTML of a GET under /visual/."""
    found = _pages(production).get(path.removeprefix(PREFIX))
    if found is None:
        return 404, b"<h1>Not Found</h1>"
    title, body, script = found
    return 200, page(title, body, script=script)
