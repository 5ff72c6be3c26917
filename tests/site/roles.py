"""A small role-based app under /roles/ (issue #69): /roles/login?as=admin (or member) signs in, /roles/admin answers
200 to an admin, 403 to a member and sends a guest to /roles/login; its API makes and deletes orders
(POST /roles/api/orders with the seed token, DELETE /roles/api/orders/<id>), each order's page is /roles/orders/<id>,
and /roles/api/broken always answers 500. `Orders` holds what the API made, for the tests to look at."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from urllib.parse import parse_qs, urlsplit

PREFIX = "/roles/"
COOKIE = "roles_user"
SEED_TOKEN = "seed-token-6f1d2c"  # what POST /roles/api/orders needs in X-Seed-Token (a test's secret)
Reply = tuple[int, bytes, dict[str, str], str]
HTML, JSON = "text/html; charset=utf-8", "application/json"


class Orders:
    """The orders the API made and not yet deleted, and every one it ever made, in order."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.live: dict[str, str] = {}  # id -> item
        self.made: list[str] = []
        self.deleted: list[str] = []

    def make(self, item: str) -> str:
        with self._lock:
            order_id = f"ord-{len(self.made) + 1}"
            self.live[order_id] = item
            self.made.append(order_id)
        return order_id

    def delete(self, order_id: str) -> bool:
        with self._lock:
            if self.live.pop(order_id, None) is None:
                return False
            self.deleted.append(order_id)
            return True


def reply(method: str, url: str, headers: dict[str, str], body: bytes, orders: Orders, page: Callable[..., bytes]) -> Reply:
    """The answer to one request under /roles/ (status, body, headers, content type)."""
    parts = urlsplit(url)
    path = parts.path.removeprefix(PREFIX)
    user = _user(headers.get("Cookie", ""))
    if path == "login":
        role = (parse_qs(parts.query).get("as") or [""])[0]
        if role in ("admin", "member"):
            cookie = {"Set-Cookie": f"{COOKIE}={role}; Path=/; SameSite=Lax"}
            return 200, page("Signed in - Roles", f"<h1>Signed in as {role}</h1>"), cookie, HTML
        return 200, page("Sign in - Roles", "<h1>Please sign in</h1>"), {}, HTML
    if path == "admin":
        if user == "admin":
            return 200, page("Admin - Roles", "<h1>Admin console</h1><p>Billing and users</p>"), {}, HTML
        if user == "member":
            return 403, page("Forbidden - Roles", "<h1>Forbidden</h1><p>Admins only.</p>"), {}, HTML
        return 302, b"", {"Location": "/roles/login"}, HTML
    if path.startswith("orders/"):
        item = orders.live.get(path.removeprefix("orders/"))
        if item is None:
            return 404, page("No order - Roles", "<h1>No such order</h1>"), {}, HTML
        return 200, page("Order - Roles", f"<h1>Order {path.removeprefix('orders/')}</h1><p>{item}</p>"), {}, HTML
    return _api(method, path, headers, body, orders)


def _api(method: str, path: str, headers: dict[str, str], body: bytes, orders: Orders) -> Reply:
    if path == "api/orders" and method == "POST":
        if headers.get("X-Seed-Token") != SEED_TOKEN:
            return 401, b'{"error": "seed token needed"}', {}, JSON
        item = str(json.loads(body or b"{}").get("item", ""))
        return 201, json.dumps({"order": {"id": orders.make(item), "item": item}}).encode(), {}, JSON
    if path.startswith("api/orders/") and method == "DELETE":
        found = orders.delete(path.removeprefix("api/orders/"))
        return (204, b"", {}, JSON) if found else (404, b'{"error": "no such order"}', {}, JSON)
    if path == "api/broken":
        return 500, b'{"error": "the database is down"}', {}, JSON
    return 404, b'{"error": "not found"}', {}, JSON


def _user(cookies: str) -> str | None:
    for part in cookies.split(";"):
        name, _, value = part.strip().partition("=")
        if name == COOKIE and value in ("admin", "member"):
            return value
    return None
