"""Fixture pages whose content arrives after the load event with no HTTP request of its own (/late/...): drawn from a
WebSocket message (as Streamlit, LiveView or Blazor Server draw), drawn by a timer (late hydration), never drawn, and
a page that never stops changing (a clock)."""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, urlsplit

PREFIX = "/late/"
LATE_MS = 2500  # how long the content takes to arrive, unless ?ms= says otherwise
GREETER = "<h1>Greeter</h1><label for=name>Your name</label><input id=name value=World><button type=button>Say hello</button>"
_SHELL = "<header><a href='#app'>Skip to main content</a> <button type=button>Deploy</button></header><main id=app></main>"
_DRAW = "function draw(html) { document.getElementById('app').innerHTML = html; }"
_PAGES = {
    "socket": (
        "Greeter - Acme",
        _SHELL,
        _DRAW + " var s = new WebSocket(location.href.replace(/^http/, 'ws').replace('/late/socket', '/late/stream'));"
        " s.onopen = function () { s.send('rerun'); }; s.onmessage = function (e) { draw(e.data); };",
    ),
    "timer": ("Greeter - Acme", _SHELL, _DRAW + f" setTimeout(function () {{ draw({json.dumps(GREETER)}); }}, {{ms}});"),
    "never": ("Greeter - Acme", _SHELL, ""),
    "clock": (
        "Clock - Acme",
        f"<main>{GREETER}<p>Time: <span id=clock>0.0</span> s</p></main>",
        "var t0 = Date.now(); setInterval(function () {"
        " document.getElementById('clock').textContent = ((Date.now() - t0) / 1000).toFixed(1); }, 100);",
    ),
}


def serve(handler: Any, page: Callable[..., bytes], stop: threading.Event) -> None:
    """Answer a GET under /late/ on `handler` (the site's request handler): a page, or its WebSocket stream."""
    url = urlsplit(handler.path)
    name = url.path.removeprefix(PREFIX)
    asked = (parse_qs(url.query).get("ms") or [""])[0]
    ms = int(asked) if asked.isdigit() else LATE_MS
    if name == "stream":
        _stream(handler, ms, stop)
    elif name in _PAGES:
        title, body, script = _PAGES[name]
        handler._send(200, page(title, body, script=script.replace("{ms}", str(ms))))
    else:
        handler._send(404, b"<h1>Not Found</h1>")


def _stream(handler: Any, ms: int, stop: threading.Event) -> None:
    """A WebSocket that answers the page's first message with its content `ms` later, then stays open, as an app's
    session socket does, until the page closes it or the site stops."""
    handler.accept_web_socket()
    with contextlib.suppress(OSError):
        handler.rfile.read(2 + 4 + len("rerun"))  # the page's one short, masked message
        if stop.wait(ms / 1000):
            return
        body = GREETER.encode()
        size = bytes([len(body)]) if len(body) < 126 else bytes([126]) + len(body).to_bytes(2, "big")
        handler.wfile.write(bytes([0x81]) + size + body)  # one text frame, unmasked as a server's are
        handler.wfile.flush()
        while not stop.wait(0.1) and handler.rfile.read(1):  # until the page goes away (or closes the socket)
            pass
