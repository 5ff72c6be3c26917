"""Fixture pages for what a person sees on top (issue #63): text under a dialog over the whole viewport, text the colour
of its background, text a stylesheet or a closed shadow root draws, and the overlays real apps have that hide nothing
a person could scroll to (a sticky header, a cookie banner over the bottom fifth, a toast in a corner). Static pages:
nothing on them moves."""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler
from urllib.parse import urlsplit

from preview_qa.demo.server import BackgroundServer, OwnedHTTPServer
from tests.site.grounded import page_html

_LONG = "".join(f"<p>Order line {i}: Widget model {i}</p>" for i in range(60))  # a page taller than the window

_PAGES = {
    # A checkout whose session expired: an opaque dialog over the whole viewport says so.
    "/covered": (
        "<h1>Checkout</h1><p>Order confirmed</p>"
        "<div role=dialog aria-modal=true style='position:fixed;inset:0;background:#fff;z-index:10'>"
        "<h2>Your session has expired</h2><p>Sign in again to continue.</p></div>"
    ),
    # White on white beside a failure a person reads.
    "/same-colour": (
        "<body style='background:#fff'><h1>Checkout</h1><p style='color:#fff'>Order confirmed</p><p>Payment failed</p></body>"
    ),
    # A status line drawn by the stylesheet, and a design system's web component with a closed shadow root.
    "/drawn": (
        "<style>.status::after { content: 'Settings saved'; }</style><h1>Settings</h1><p class=status></p>"
        "<acme-badge></acme-badge><script>customElements.define('acme-badge', class extends HTMLElement {"
        " constructor() { super(); this.attachShadow({mode: 'closed'}).innerHTML = '<b>Plan: Pro</b>'; } });</script>"
    ),
    # The overlays of a real app: a sticky header, a cookie banner over the bottom 20 %, a toast in the top right.
    "/overlays": (
        "<body style='margin:0'><header style='position:sticky;top:0;height:64px;background:#123;color:#fff'>Acme</header>"
        "<h1>Orders</h1><p>Three orders placed</p>" + _LONG + "<p>Total: 3 orders</p>"
        "<div style='position:fixed;left:0;right:0;bottom:0;height:20vh;background:#333;color:#fff'>We use cookies"
        "</div><div role=status style='position:fixed;top:72px;right:8px;width:220px;background:#0a0;color:#fff'>"
        "Saved</div></body>"
    ),
}


class _Handler(BaseHTTPRequestHandler):
    server: OwnedHTTPServer

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        body = _PAGES.get(urlsplit(self.path).path)
        page = page_html(body if body is not None else "<h1>Not found</h1>")
        self.send_response(200 if body is not None else 404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(page)))
        self.end_headers()
        self.wfile.write(page)


class SeenSite(BackgroundServer):
    """The pages above on 127.0.0.1."""

    handler = _Handler
