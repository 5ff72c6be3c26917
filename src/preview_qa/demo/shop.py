"""DemoShop: the demo's small web app (home, login and its dashboard, signup, product, a broken checkout, help, the
settings page and the blog) served on 127.0.0.1; a site with more pages subclasses its handler (`get`, `post`). Given
a mail port, a sign-up mails its one-use verification link (/verify) there by SMTP."""

from __future__ import annotations

import html
import json
import secrets
import smtplib
from email.message import EmailMessage
from http.server import BaseHTTPRequestHandler
from typing import Any, ClassVar, cast
from urllib.parse import parse_qs, urlsplit

from preview_qa.demo import blog, settings
from preview_qa.demo.pages import (
    BROKEN,
    HELP,
    NOT_FOUND,
    PR_SIGNUP_JS,
    PR_STOCK_JS,
    PRODUCT,
    STOCK_API,
    home,
    login_form,
    page,
    product,
    signup_form,
)
from preview_qa.demo.server import BackgroundServer, OwnedHTTPServer

DEMO_EMAIL = "demo@acme.test"
SESSION_COOKIE = "acme_session"
ORDERS = [("#1001", "Anvil", "$19.99"), ("#1002", "Rocket skates", "$89.00"), ("#1003", "Giant magnet", "$42.50")]


def _valid_email(email: str) -> bool:
    local, at, domain = email.partition("@")
    return bool(at and local and "." in domain.strip(".") and " " not in email)


class ShopHandler(BaseHTTPRequestHandler):
    """The shop's requests: each one recorded, then answered by `get` or `post`, else a 404. A subclass admits a
    request or not (`admitted`) and answers its own paths before the shop's."""

    server: OwnedHTTPServer

    @property
    def site(self) -> DemoShop:
        return cast("DemoShop", self.server.owner)

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _record(self) -> str:
        with self.site._lock:
            self.site.requests.append(self.path)
            self.site.request_log.append((self.command, self.path))
            self.site.header_log.append((self._host(), self.path, dict(self.headers.items())))
        return urlsplit(self.path).path

    def _send(
        self,
        status: int,
        body: bytes = b"",
        headers: dict[str, str] | None = None,
        ctype: str = "text/html; charset=utf-8",
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _redirect(self, location: str, headers: dict[str, str] | None = None) -> None:
        self._send(303, b"", {"Location": location, **(headers or {})})

    def _signed_in(self, cookie: str = SESSION_COOKIE) -> bool:
        return self._session(cookie) is not None

    def _session(self, cookie: str) -> str | None:
        """The request's valid session token in `cookie`, if it has one."""
        for part in self.headers.get("Cookie", "").split(";"):
            name, _, value = part.strip().partition("=")
            if name == cookie and value in self.site._sessions:
                return value
        return None

    def _form(self) -> dict[str, str]:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length).decode("utf-8", "replace") if length else ""
        return {k: v[0] for k, v in parse_qs(raw, keep_blank_values=True).items()}

    def _host(self) -> str:
        return urlsplit(f"//{self.headers.get('Host', '')}").hostname or ""

    def admitted(self) -> bool:
        """Whether the request may reach a page; if not, its answer was sent. The shop admits every request."""
        return True

    def do_HEAD(self) -> None:
        self.do_GET()

    def do_GET(self) -> None:
        path = self._record()
        if self.admitted() and not self.get(path):
            self._send(404, NOT_FOUND)

    def do_POST(self) -> None:
        path = self._record()
        if self.admitted() and not self.post(path):
            self._send(404, NOT_FOUND)

    def do_DELETE(self) -> None:
        path = self._record()
        if self.admitted() and not self.delete(path):
            self._send(404, NOT_FOUND)

    def delete(self, path: str) -> bool:
        """Answer a DELETE at the shop's API; False at a path it has none at."""
        return self._orders_api(path)

    def _orders_api(self, path: str) -> bool:
        """The shop's API for test data: POST /api/orders places an order ({item}), DELETE /api/orders/<id> takes it
        back; both want the shop's password in X-Demo-Password. False at another path."""
        site, answer = self.site, "application/json"
        if not (path == "/api/orders" and self.command == "POST") and not (
            path.startswith("/api/orders/") and self.command == "DELETE"
        ):
            return False
        if self.headers.get("X-Demo-Password") != site.password:
            self._send(401, b'{"error": "X-Demo-Password needed"}', ctype=answer)
        elif self.command == "POST":
            item = str(json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}").get("item", ""))
            with site._lock:
                number = str(1004 + len(site.placed) + len(site.taken_back))
                site.placed[number] = item
            self._send(201, json.dumps({"order": {"id": number, "item": item}}).encode(), ctype=answer)
        else:
            with site._lock:
                found = site.placed.pop(path.removeprefix("/api/orders/"), None)
                site.taken_back += [path.removeprefix("/api/orders/")] if found is not None else []
            self._send(204 if found is not None else 404, b"", ctype=answer)
        return True

    def get(self, path: str) -> bool:
        """Answer a GET at one of the shop's pages; False at a path it has no page at."""
        if settings.owns(path):
            self._settings()
            return True
        if path == blog.PREFIX or path.startswith(blog.PREFIX + "/"):
            self._send(*blog.reply(self.path, page))
            return True
        breaks = self.site.breaks  # the PR copy of `demo --explore`
        pages = {
            "/": home(self.site.links),
            "/login": login_form(),
            "/signup": signup_form(script=PR_SIGNUP_JS) if breaks else signup_form(),
            "/product": product(PR_STOCK_JS) if breaks else PRODUCT,
            "/broken": BROKEN,
            "/help": HELP,
        }
        if path in pages:
            self._send(200, pages[path])
        elif path == "/verify":
            token = parse_qs(urlsplit(self.path).query).get("token", [""])[0]
            with self.site._lock:
                used = token in self.site._verifications
                self.site._verifications.discard(token)
            said = "Email verified" if used else "This link is not valid"
            self._send(200, page(f"{said} - Acme", f"<h1>{said}</h1><p><a href='/'>Home</a></p>"))
        elif path == "/dashboard":
            self._serve_dashboard()
        elif path.startswith("/orders/") and path.removeprefix("/orders/") in self.site.placed:
            number = path.removeprefix("/orders/")
            item = html.escape(self.site.placed[number])
            who = f"Placed by {DEMO_EMAIL}" if self._signed_in() else "Log in to see who placed it"
            self._send(200, page(f"Order #{number} - Acme", f"<h1>Order #{number}</h1><p>{item}</p><p>{who}</p>"))
        elif path == "/api/cart":
            self._send(500, b'{"error": "cart service unavailable"}', ctype="application/json")
        elif path == STOCK_API:
            self._send(500, b'{"error": "stock service unavailable"}', ctype="application/json")
        else:
            return False
        return True

    def _serve_dashboard(self) -> None:
        if not self._signed_in():
            self._redirect("/login")
            return
        rows = "".join(f"<tr><td>{n}</td><td>{item}</td><td>{price}</td></tr>" for n, item, price in ORDERS)
        self._send(
            200,
            page(
                "Dashboard - Acme",
                f"<h1>Dashboard</h1><p>Signed in as {DEMO_EMAIL}</p><h2>Your orders</h2>"
                f"<table><caption>Your orders</caption><tr><th>Order</th><th>Item</th>"
                f"<th>Total</th></tr>{rows}</table>",
            ),
        )

    def post(self, path: str) -> bool:
        """Answer a POST to one of the shop's forms; False at a path it has none at."""
        if settings.owns(path):
            self._settings()
            return True
        if self._orders_api(path):
            return True
        form = self._form()
        site = self.site
        if path == "/login":
            if form.get("email", "").strip() == DEMO_EMAIL and form.get("password", "") == site.password:
                token = secrets.token_hex(16)
                with site._lock:
                    site._sessions.add(token)
                self._redirect("/dashboard", {"Set-Cookie": f"{SESSION_COOKIE}={token}; Path=/; HttpOnly; SameSite=Lax"})
            else:
                self._send(200, login_form("Invalid email or password"))
        elif path == "/signup":
            name, email = form.get("name", "").strip(), form.get("email", "").strip()
            if not _valid_email(email):
                self._send(200, signup_form(name, email, "Please enter a valid email address"))
            else:
                if site.mail_port is not None:
                    site.mail_verification(email)
                self._send(
                    200,
                    page(
                        "Welcome - Acme",
                        f"<h1>Welcome, {html.escape(name)}!</h1><p>We sent a confirmation to {html.escape(email)}.</p>",
                    ),
                )
        else:
            return False
        return True

    def _settings(self) -> None:
        sent = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        status, body, ctype = settings.reply(
            self.command, urlsplit(self.path).path, sent, page, self.site.settings, self.site._lock
        )
        self._send(status, body, ctype=ctype)


class DemoShop(BackgroundServer):
    """The demo's web app. `start()` returns the base URL; every request path is appended to `requests`."""

    handler: type[BaseHTTPRequestHandler] = ShopHandler
    links: ClassVar[list[tuple[str, str]]] = [  # the home page's (href, label)
        ("/login", "Log in"),
        ("/signup", "Sign up"),
        ("/product", "Product"),
        ("/broken", "Checkout"),
    ]
    mail_extra = ""  # more of the verification mail's HTML (a fixture's: a script, a tracking pixel)

    def __init__(
        self,
        password: str = "demo-pass-123",
        port: int = 0,
        host: str = "127.0.0.1",
        breaks: bool = False,
        mail_port: int | None = None,
    ) -> None:
        """`breaks`: the pull request's copy that `demo --explore` explores, which breaks two things (demo/pages.py).
        `mail_port`: the SMTP server a sign-up mails its verification link to (demo/mail.py's)."""
        super().__init__(port, host)
        self.password, self.breaks, self.mail_port = password, breaks, mail_port
        self._verifications: set[str] = set()  # the tokens of the links mailed and not yet used
        self.header_log: list[tuple[str, str, dict[str, str]]] = []  # (host name, path, headers) of every request
        self.requests: list[str] = []  # every request's path (with query), in order
        self.request_log: list[tuple[str, str]] = []  # (method, path)
        self._sessions: set[str] = set()
        self.settings: dict[str, str] = {}  # what POST /api/settings saved (demo/settings.py)
        self.placed: dict[str, str] = {}  # the orders POST /api/orders placed and no DELETE took back: number -> item
        self.taken_back: list[str] = []  # the numbers DELETE /api/orders/<number> took back

    def mail_verification(self, address: str) -> None:
        """Mail `address` its one-use link to /verify, as a sign-up does."""
        token = secrets.token_urlsafe(16)
        with self._lock:
            self._verifications.add(token)
        link = f"{self.url}/verify?token={token}"
        message = EmailMessage()
        message["Subject"], message["From"], message["To"] = "Verify your email", "Acme <no-reply@acme.test>", address
        message.set_content(f"Welcome to Acme! Verify your email: {link}")
        body = f"<h1>Welcome to Acme</h1><p><a href='{link}'>Verify your email</a></p>{self.mail_extra}"
        message.add_alternative(body, subtype="html")
        with smtplib.SMTP(self.host, self.mail_port or 25, timeout=10) as smtp:
            smtp.send_message(message)
