"""DemoSite: the fixture site the e2e tests serve on 127.0.0.1: the demo shop's pages (preview_qa.demo.shop) and the
tests' own (login, signup, product, todos, cart, broken, hostile, leaky, moving, late, twins, visual, problems...
pages), behind basic auth or a host's login wall when a test asks for them."""

# get is over 60 lines: the route table, one branch per page, read top to bottom.

from __future__ import annotations

import base64
import contextlib
import hashlib
import secrets
from typing import ClassVar, cast
from urllib.parse import parse_qs, quote, urlsplit

import pyotp

from preview_qa.demo.pages import NOT_FOUND, login_form, page
from preview_qa.demo.shop import DEMO_EMAIL, DemoShop, ShopHandler
from tests.site import (
    answered,
    imitation,
    late,
    moving,
    page_problems,
    roles,
    server_errors,
    states,
    todo,
    twins,
    viewport,
    visual,
)
from tests.site.pages import (
    ACCOUNT,
    APP_LOGIN,
    APP_PAGES,
    CART,
    CHECKOUT_PREVIEW,
    CHECKOUT_PRODUCTION,
    EXTERNAL,
    FIRST_LOAD_BROKEN,
    HOSTILE,
    LOGIN_WALL,
    MENU,
    NEWSLETTER,
    NEWSLETTER_UNLABELED,
    SERVER_ERROR,
    WIDGET_FRAME,
    app_page,
    leaky_page,
    order_page,
    save_page,
    search_page,
    third_party_page,
    two_factor_form,
    widget_page,
)
from tests.site.signals import Signals

DEMO_TOTP_SEED = "JBSWY3DPEHPK3PXPJBSWY3DP"  # /2fa's authenticator secret (base32)
APP_COOKIE = "acme_app_session"  # the /app pages' session: shown only together with the browser's stored profile
COLLECTOR_HOST = "localhost"  # the same server under a second host name: an attacker's, for the secret-leak pages


class _Handler(ShopHandler):
    @property
    def site(self) -> DemoSite:
        return cast("DemoSite", self.server.owner)

    def accept_web_socket(self) -> None:
        """Answer a WebSocket's opening handshake: the connection carries its frames from now on."""
        key = self.headers.get("Sec-WebSocket-Key", "") + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
        accept = base64.b64encode(hashlib.sha1(key.encode()).digest()).decode()
        self.wfile.write(
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Accept: {accept}\r\n\r\n".encode()
        )
        self.close_connection = True

    def _web_socket(self) -> None:
        """The collector's WebSocket: each message the page sends on it is recorded as a request (/collect-ws#<text>)."""
        self.accept_web_socket()
        with contextlib.suppress(OSError):
            while (head := self.rfile.read(2)) and len(head) == 2 and head[0] & 0x0F != 8:  # until a close frame
                size = head[1] & 0x7F
                size = int.from_bytes(self.rfile.read({126: 2, 127: 8}[size]), "big") if size > 125 else size
                mask = self.rfile.read(4)
                text = bytes(b ^ mask[i % 4] for i, b in enumerate(self.rfile.read(size))).decode("utf-8", "replace")
                with self.site._lock:
                    self.site.requests.append(f"/collect-ws#{text}")

    def admitted(self) -> bool:
        return self._authorized() and self._past_login_wall()

    def _authorized(self) -> bool:
        """Basic auth, when the site asks for it; otherwise a 401 challenge was sent."""
        auth = self.site.basic_auth
        if auth is None or self._host() == COLLECTOR_HOST:
            return True
        if self.headers.get("Authorization", "") == "Basic " + base64.b64encode(":".join(auth).encode()).decode():
            return True
        self._send(401, b"", {"WWW-Authenticate": 'Basic realm="preview"'})
        return False

    def _past_login_wall(self) -> bool:
        """A host's deployment protection, as Vercel's looks: a 401 sign-in page unless the bypass header is sent."""
        wall = self.site.login_wall
        if wall is None or self._host() == COLLECTOR_HOST or self.headers.get("x-vercel-protection-bypass") == wall:
            return True
        self._send(401, LOGIN_WALL.encode())
        return False

    def delete(self, path: str) -> bool:
        """The tests' own API first (the role-based app's), then the demo shop's."""
        return self._roles(path) or super().delete(path)

    def _roles(self, path: str) -> bool:
        """The role-based app and its API (tests/site/roles.py), for every method."""
        if not path.startswith(roles.PREFIX):
            return False
        sent = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self._send(*roles.reply(self.command, self.path, dict(self.headers.items()), sent, self.site.orders, page))
        return True

    def get(self, path: str) -> bool:
        """The tests' own pages first, then the demo shop's."""
        if self._roles(path):
            return True
        if path.startswith(moving.PREFIX):
            self._moving()
            return True
        if path.startswith(server_errors.PREFIX):
            self._server_errors()
            return True
        if path.startswith(late.PREFIX):
            late.serve(self, page, self.site._stop)
            return True
        if path.startswith(answered.PREFIX):
            answered.serve(self, page, self.site._stop)
            return True
        if path.startswith(twins.PREFIX):
            self._send(*twins.reply(self.path, page))
            return True
        if path.startswith(page_problems.PREFIX):
            other = f"http://{COLLECTOR_HOST}:{self.server.server_address[1]}"
            self._send(*page_problems.reply(path, other, page, self.site.signals.given(page_problems.BREAK)))
            return True
        if path.startswith(imitation.PREFIX):
            self._send(*imitation.reply(path, page))
            return True
        if path.startswith(visual.PREFIX):
            self._send(*visual.reply(path, self.site.production, page))
            return True
        if path == "/collect-ws":
            self._web_socket()
            return True
        if path.startswith(states.PREFIX):
            found = states.page_at(path, page)
            self._send(200 if found else 404, found or NOT_FOUND)
            return True
        query = parse_qs(urlsplit(self.path).query)
        pages = {
            "/signin": login_form(button="Sign in", action="/login?slow=1"),  # a server slow to sign in (3 s)
            "/cart": CART,
            "/2fa": two_factor_form(),
            "/menu": MENU,
            "/hostile": HOSTILE,
            "/external": EXTERNAL,
            "/newsletter": NEWSLETTER,
            "/newsletter-unlabeled": NEWSLETTER_UNLABELED,
        }
        stateful = {
            "/todos": lambda: todo.todos_page(self.site.todo_version),
            "/todos/summary": todo.summary_page,
            "/viewport": viewport.viewport_page,
            "/basket": lambda: todo.cart_page(todo.cart_items(self.headers.get("Cookie", ""))),
        }
        if path in pages:
            self._send(200, pages[path])
        elif path in stateful:
            title, body, script = stateful[path]()
            self._send(200, page(title, body, script=script))
        elif path == "/search":
            self._send(200, search_page((query.get("code") or [""])[0], self.headers.get("X-Preview-Token", "")))
        elif path == "/third-party":
            self._send(200, third_party_page(f"http://{COLLECTOR_HOST}:{self.server.server_address[1]}"))
        elif path.startswith("/elsewhere/"):  # the preview's own redirect to another origin
            other = f"http://{COLLECTOR_HOST}:{self.server.server_address[1]}"
            self._send(int((query.get("status") or ["302"])[0]), b"", {"Location": other + path.removeprefix("/elsewhere")})
        elif path in ("/leaky", "/relay", "/go", "/widget", "/widget-frame"):
            self._serve_leak(path, query)
        elif path == "/app/login":
            self._send(200, APP_LOGIN)
        elif path in APP_PAGES:
            self._serve_app_page(path, query)
        elif path in ("/account", "/one-in-three"):  # broken on the first load of each ?key=..., fine on every later one;
            # /one-in-three: broken on every third load of each ?key=... (a flaky test: run --repeat-each)
            with self.site._lock:
                loads = self.site._loads[self.path] = self.site._loads.get(self.path, 0) + 1
            broken = loads == 1 if path == "/account" else loads % 3 == 0
            self._send(200, FIRST_LOAD_BROKEN if broken else ACCOUNT)
        elif path == "/new-checkout":
            self._send(200, CHECKOUT_PRODUCTION if self.site.production else CHECKOUT_PREVIEW)
        elif path in ("/order", "/save"):
            asked = (query.get("ms") or [""])[0]
            ms = int(asked) if asked.isdigit() else 2500 if path == "/order" else 1000
            self._send(200, order_page(ms) if path == "/order" else save_page(ms))
        elif path == "/slow":
            self._slow()
        elif path == "/loop":
            hops = (query.get("n") or ["0"])[0]
            n = int(hops) if hops.isdigit() else 0
            self._send(302, b"", {"Location": f"/loop?n={n + 1}"})
        elif path == "/status/500":
            self._send(500, SERVER_ERROR)
        else:
            return super().get(path)
        return True

    def _serve_leak(self, path: str, query: dict[str, list[str]]) -> None:
        collector = f"http://{COLLECTOR_HOST}:{self.server.server_address[1]}"
        if path == "/leaky":
            self._send(200, leaky_page(collector))
        elif path == "/widget":
            self._send(200, widget_page(collector))
        elif path == "/widget-frame":
            self._send(200, WIDGET_FRAME)
        elif path == "/go":  # an open redirect: wherever it is told
            self._redirect((query.get("to") or ["/"])[0])
        else:  # the preview's own server sends the password on
            self._send(302, b"", {"Location": f"{collector}/collect?v={quote((query.get('pw') or [''])[0])}"})

    def _serve_app_page(self, path: str, query: dict[str, list[str]]) -> None:
        token = self._session(APP_COOKIE)
        with self.site._lock:
            self.site.app_visits.append((path, token is not None))
        if path == "/app/billing" and token and "session" not in query:
            self._redirect(f"/app/billing?session={token}")  # like an old app that carries its session in URLs
            return
        self._send(200, app_page(path, token is not None))

    def post(self, path: str) -> bool:
        """The tests' own forms first (after a wait, for a form sent to ?slow=1), then the demo shop's."""
        if path.startswith(moving.PREFIX):
            self._moving()
            return True
        if path.startswith(server_errors.PREFIX):
            self._server_errors()
            return True
        if self._roles(path):
            return True
        site = self.site
        if "slow" in parse_qs(urlsplit(self.path).query):
            site._stop.wait(3.0)
        if path == "/2fa":
            code = self._form().get("code", "").strip()
            site.totp_codes.append(code)
            if pyotp.TOTP(DEMO_TOTP_SEED).verify(code, valid_window=1):
                self._send(200, page("Verified - Acme", "<h1>Two-factor sign-in complete</h1>"))
            else:
                self._send(200, two_factor_form("Wrong authentication code"))
        elif path == "/app/login":
            form = self._form()
            if form.get("email", "").strip() == DEMO_EMAIL and form.get("password", "") == site.password:
                token = secrets.token_hex(16)
                with site._lock:
                    site._sessions.add(token)
                    site.app_tokens.append(token)
                self._redirect("/app/account", {"Set-Cookie": f"{APP_COOKIE}={token}; Path=/; HttpOnly; SameSite=Lax"})
            else:
                self._send(200, APP_LOGIN)
        elif path == "/basket/add":
            items = todo.cart_items(self.headers.get("Cookie", "")) + 1
            self._redirect("/basket", {"Set-Cookie": f"{todo.CART_COOKIE}={items}; Path=/; SameSite=Lax"})
        else:
            return super().post(path)
        return True

    def _moving(self) -> None:
        other = f"http://{COLLECTOR_HOST}:{self.server.server_address[1]}"
        status, body, ctype = moving.reply(self.command, self.path, other, page, self.site._stop, self.site.signals)
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # an answer held past its page's close
            self._send(status, body, ctype=ctype)

    def _server_errors(self) -> None:
        sent = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        status, body, ctype, headers = server_errors.reply(self.command, self.path, sent, page, self.site._stop)
        self._send(status, body, headers, ctype)

    def _slow(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.end_headers()
        try:
            self.wfile.write(b"<!doctype html><html><head><title>Slow - Acme</title></head><body><h1>Loading")
            self.wfile.flush()
            stop = self.site._stop
            while not stop.wait(0.1):  # never finish on our own; give up only when the site stops
                pass
        except OSError:
            pass
        self.close_connection = True


class DemoSite(DemoShop):
    """The fixture web app. `start()` returns the base URL; every request path is appended to `requests`.
    `production=True` serves the last release, where the pages this pull request broke still work (a baseline)."""

    handler = _Handler
    links: ClassVar[list[tuple[str, str]]] = [*DemoShop.links, ("/hostile", "Pricing"), ("/external", "External link")]

    def __init__(
        self,
        password: str = "demo-pass-123",
        port: int = 0,
        host: str = "127.0.0.1",
        production: bool = False,
        basic_auth: tuple[str, str] | None = None,
        login_wall: str | None = None,
    ) -> None:
        super().__init__(password, port, host)
        self.production = production
        self.basic_auth = basic_auth  # (user, password) every request to `host` needs (COLLECTOR_HOST's do not)
        self.login_wall = login_wall  # a host's protection: without this x-vercel-protection-bypass, a 401 login page
        self._loads: dict[str, int] = {}  # GETs per path and query, for pages that change after their first load
        self.todo_version = 1  # 2: the todo form as a new release rebuilt it (a recorded replay no longer fits)
        self.totp_codes: list[str] = []  # every code posted to /2fa, in order
        self.app_tokens: list[str] = []  # every /app session cookie value handed out, in order
        self.app_visits: list[tuple[str, bool]] = []  # (/app page, whether its request carried a valid session)
        self.signals = Signals(self._stop)  # what the tests tell the pages that move when told (tests/site/signals.py)
        self.orders = roles.Orders()  # what the role-based app's API made (tests/site/roles.py)

    def end_sessions(self) -> None:
        """Every session expires: a browser state saved before now no longer signs anyone in."""
        with self._lock:
            self._sessions.clear()
