"""A small app at the root of its own server (AcmeApp), as a Nuxt or React Router app would serve the trees the plan
tests lay out: a home page that links to a post (/posts has no page of its own), an about page with a button, a
product list and a product."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType

from preview_qa.demo.pages import page

PAGES = {
    "/": page(
        "Acme",
        "<main><h1>Acme</h1><p>Welcome to Acme.</p><nav><a href=/about>About</a> "
        "<a href=/posts/hello-world>Our first post</a> <a href=/products>Products</a></nav></main>",
    ),
    "/about": page(
        "About Acme",
        "<main><h1>About Acme</h1><p>We make anvils since 1949.</p><button type=button "
        "onclick=\"this.textContent='Thanks!'\">Say hi</button></main>",
    ),
    "/posts/hello-world": page("Hello world", "<main><h1>Post: hello-world</h1><p>Anvils are heavy.</p></main>"),
    "/products": page("Products", "<main><h1>Products</h1><ul><li><a href=/products/anvil>Anvil</a></li></ul></main>"),
    "/products/anvil": page("Anvil", "<main><h1>Product anvil</h1><p>Price: $42</p></main>"),
}


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = PAGES.get(self.path.split("?", 1)[0].rstrip("/") or "/")
        self.send_response(200 if body else 404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        body = body or page("Not found", "<main><h1>404</h1></main>")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


class AcmeApp:
    """The app on 127.0.0.1 (a free port) while the `with` block runs; `url` is its base URL."""

    def __init__(self) -> None:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> AcmeApp:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None) -> None:
        self._server.shutdown()
        self._server.server_close()
