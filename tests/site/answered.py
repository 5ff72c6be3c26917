"""Fixture pages whose WebSocket, opened at load, carries more than the page's first draw (/answered/...): a click
answered over it a moment later, after an acknowledgement (as a Panel app's async callback answers: Bokeh's OK at once,
its patch when the callback ends; `?ack=0`: the answer alone), the same shop drawn only inside open shadow roots, as
Bokeh draws (`?toast=` ms: its answer a toast shown that long, its own behaviour, as a Panel notification is;
`?held`: drawn only when a test calls `draw()`, not when its socket says ready), and a ticker that streams on its own
while the page acknowledges each tick."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, urlsplit

PREFIX = "/answered/"
ANSWER_MS = 1000  # how long the server takes to answer the click, unless ?ms= says otherwise
TICK_MS = 1500  # how often the ticker streams, unless ?ms= says otherwise: quiet windows fit between two ticks
ANSWER = "Order #1042 placed"
_OPEN = "var s = new WebSocket(location.href.replace(/^http/, 'ws').replace('/answered/{page}', '/answered/{socket}'));"
_PAGES = {
    "order": (
        "Shop - Acme",
        "<main><h1>Shop</h1><p id=status>Connecting</p><button type=button id=order>Place order</button></main>",
        _OPEN.format(page="order", socket="orders") + " var said = document.getElementById('status');"
        " s.onmessage = function (e) { if (e.data === 'ready') said.textContent = 'No order yet';"
        " else if (e.data !== 'ok') said.textContent = e.data; };"  # 'ok' acknowledges the click: nothing to draw
        " document.getElementById('order').onclick = function () { s.send('order'); };",
    ),
    # Nothing outside its shadow roots: a custom element upgraded once in the page (its root attached to a host already
    # there), and inside it, once the socket says ready, a view made with a root of its own (Bokeh's way). Its answer
    # is the status, or a toast shown `?toast=` ms.
    "shadow": (
        "Shop - Acme",
        "<main><shop-app></shop-app></main>",
        _OPEN.format(page="shadow", socket="orders") + " customElements.define('shop-app', class extends HTMLElement {"
        " connectedCallback() { if (!this.shadowRoot) this.attachShadow({mode: 'open'}); } });"
        " var root = null, query = new URLSearchParams(location.search), toast = query.get('toast');"
        " function draw() { var view = document.createElement('div'); root = view.attachShadow({mode: 'open'});"
        " root.innerHTML = '<h1>Shop</h1><p>Status: <span id=status>No order yet</span></p>"
        "<button type=button id=order>Place order</button>';"
        " root.getElementById('order').onclick = function () { s.send('order'); };"
        " document.querySelector('shop-app').shadowRoot.append(view); }"
        " s.onmessage = function (e) { if (e.data === 'ready') { if (!query.has('held')) draw(); }"
        " else if (e.data === 'ok') {}"  # the acknowledgement: nothing to draw
        " else if (toast === null) root.getElementById('status').textContent = e.data;"
        " else { var note = document.createElement('p'); note.setAttribute('role', 'status'); note.textContent = e.data;"
        " root.append(note); setTimeout(function () { note.remove(); }, Number(toast)); } };",
    ),
    "ticker": (
        "Prices - Acme",
        "<main><h1>Prices</h1><p>Price: <span id=price>none yet</span></p><button type=button id=note>Note it</button>"
        "<p id=noted>Nothing noted</p></main>",
        _OPEN.format(page="ticker", socket="prices") + " var price = document.getElementById('price');"
        " s.onmessage = function (e) { price.textContent = e.data; s.send('ack ' + e.data); };"
        " document.getElementById('note').onclick = function () {"
        " document.getElementById('noted').textContent = 'Noted at ' + price.textContent; };",
    ),
}


def serve(handler: Any, page: Callable[..., bytes], stop: threading.Event) -> None:
    """Answer a GET under /answered/ on `handler` (the site's request handler): a page, or its WebSocket."""
    url = urlsplit(handler.path)
    name = url.path.removeprefix(PREFIX)
    query = parse_qs(url.query)
    asked = (query.get("ms") or [""])[0]
    ms = int(asked) if asked.isdigit() else None
    if name == "orders":
        _orders(handler, ANSWER_MS if ms is None else ms, query.get("ack") != ["0"], stop)
    elif name == "prices":
        _prices(handler, TICK_MS if ms is None else ms, stop)
    elif name in _PAGES:
        title, body, script = _PAGES[name]
        handler._send(200, page(title, body, script=script))
    else:
        handler._send(404, b"<h1>Not Found</h1>")


def _orders(handler: Any, ms: int, ack: bool, stop: threading.Event) -> None:
    """The shop's session socket: 'ready' as it opens, then each 'order' acknowledged at once (if `ack`) and answered
    `ms` later, until the page closes it (or the site stops)."""
    handler.accept_web_socket()
    with contextlib.suppress(OSError):
        send_text(handler, "ready")
        while (message := read_text(handler)) is not None:
            if message != "order":
                continue
            if ack:
                send_text(handler, "ok")
            if stop.wait(ms / 1000):
                return
            send_text(handler, ANSWER)


def _prices(handler: Any, ms: int, stop: threading.Event) -> None:
    """A price every `ms`, whatever the page sends (its acknowledgements are never read), until the page goes away."""
    handler.accept_web_socket()
    with contextlib.suppress(OSError):
        for tick in range(1, 10_000):
            send_text(handler, f"{100 + tick}.00")
            if stop.wait(ms / 1000):
                return


def read_text(handler: Any) -> str | None:
    """The next message the page sent on the handler's WebSocket (frames from a browser are masked); None once closed."""
    head = handler.rfile.read(2)
    if len(head) < 2 or head[0] & 0x0F == 8:  # the connection ended, or a close frame
        return None
    size = head[1] & 0x7F
    size = int.from_bytes(handler.rfile.read({126: 2, 127: 8}[size]), "big") if size > 125 else size
    mask = handler.rfile.read(4)
    return bytes(b ^ mask[i % 4] for i, b in enumerate(handler.rfile.read(size))).decode("utf-8", "replace")


def send_text(handler: Any, text: str) -> None:
    """One text frame to the page, unmasked as a server's are."""
    body = text.encode()
    size = bytes([len(body)]) if len(body) < 126 else bytes([126]) + len(body).to_bytes(2, "big")
    handler.wfile.write(bytes([0x81]) + size + body)
    handler.wfile.flush()
