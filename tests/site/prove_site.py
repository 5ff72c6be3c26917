"""The fixture site of tests/e2e/test_prove.py: a notes form that posts and redirects (303), as Django's admin, Rails and
Laravel do, with a fresh CSRF token (a hidden input and a <meta>) and a script nonce in every load; and the demo's
settings page, which saves by fetch (src/preview_qa/demo/settings.py). Every request is logged as (method, path)."""

from __future__ import annotations

import html
import re
import secrets
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self
from urllib.parse import parse_qs, urlsplit

from preview_qa.demo import settings

NEW = "/notes/new"
HTML = "text/html; charset=utf-8"


def page(title: str, body: str, *, script: str = "", token: str = "") -> bytes:
    """A whole document under the site's header; with `token`, the CSRF <meta> and the script nonce of this load."""
    meta = f'<meta name="csrf-token" content="{token}">' if token else ""
    js = f'<script nonce="{token}">{script}</script>' if script else ""
    return (
        f'<!doctype html><html lang=en><head><meta charset=utf-8><link rel="icon" href="data:,">{meta}'
        f"<title>{html.escape(title)}</title></head><body><header><p>Acme notes</p></header>{body}{js}</body></html>"
    ).encode()


def new_note_form(token: str, error: str = "") -> bytes:
    said = f'<p role="alert">{html.escape(error)}</p>' if error else ""
    return page(
        "New note",
        f'<h1>New note</h1>{said}<form method="post" action="{NEW}">'
        f'<input type="hidden" name="csrf_token" value="{token}">'
        '<label for="title">Title</label><input id="title" name="title"><button type="submit">Save</button></form>',
        script="document.getElementById('title').focus();",
        token=token,
    )


def slug(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")


class ProveSite:
    """The site on 127.0.0.1, in a thread; `url` once entered, `request_log` of every request."""

    def __init__(self) -> None:
        self.request_log: list[tuple[str, str]] = []
        self.notes: dict[str, str] = {}  # slug -> title, saved by POST /notes/new
        self.settings: dict[str, str] = {}  # what POST /api/settings saved
        self.tokens: set[str] = set()  # every CSRF token handed out: a POST must carry one
        self.lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> Self:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self._server.shutdown()
        self._server.server_close()

    def reply(self, method: str, path: str, body: bytes) -> tuple[int, bytes, dict[str, str]]:
        """The answer to one request: status, body and headers."""
        if settings.owns(path):
            status, sent, kind = settings.reply(method, path, body, page, self.settings, self.lock)
            return status, sent, {"Content-Type": kind}
        if path == NEW:
            return self._new_note(method, body)
        title = self.notes.get(path.removeprefix("/notes/")) if method == "GET" else None
        if title is None:
            return 404, page("Not found", "<h1>Not found</h1>"), {"Content-Type": HTML}
        return 200, page(title, f"<h1>{html.escape(title)}</h1><p>Saved note: {html.escape(title)}</p>"), {"Content-Type": HTML}

    def _new_note(self, method: str, body: bytes) -> tuple[int, bytes, dict[str, str]]:
        token = secrets.token_urlsafe(16)  # a fresh one in every load, as a framework's CSRF protection writes it
        with self.lock:
            self.tokens.add(token)
        if method == "GET":
            return 200, new_note_form(token), {"Content-Type": HTML}
        form = {k: v[0] for k, v in parse_qs(body.decode()).items()}
        if form.get("csrf_token") not in self.tokens:
            return 403, page("Forbidden", "<h1>CSRF token missing or wrong</h1>"), {"Content-Type": HTML}
        title = form.get("title", "").strip()
        if not title:
            return 200, new_note_form(token, "Give the note a title."), {"Content-Type": HTML}
        with self.lock:
            self.notes[slug(title)] = title
        return 303, b"", {"Location": f"/notes/{slug(title)}"}


def _handler(site: ProveSite) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            self._answer()

        def do_POST(self) -> None:
            self._answer()

        def _answer(self) -> None:
            path = urlsplit(self.path).path
            with site.lock:
                site.request_log.append((self.command, path))
            status, body, headers = site.reply(self.command, path, self.rfile.read(int(self.headers.get("Content-Length") or 0)))
            self.send_response(status)
            for name, value in {**headers, "Content-Length": str(len(body)), "Cache-Control": "no-store"}.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

    return Handler
