"""Fixture pages whose server fails where the page does not show it (/errors/...): a save that says "Changes saved" at
once while its request answers 500 a second later, told only by a toast that hides itself; the same app retrying and
succeeding; and a start page behind basic auth."""

from __future__ import annotations

import threading
from collections.abc import Callable
from urllib.parse import urlsplit

PREFIX = "/errors/"
ANSWER_S = 1.0  # how long the save request takes to answer
TOAST_MS = 1500  # how long the error toast stays
REALM = "Preview deployment"

Reply = tuple[int, bytes, str, dict[str, str]]  # status, body, content type, headers
HTML = "text/html; charset=utf-8"
JSON = "application/json"

_PROFILE = """<h1>Profile</h1><label for=name>Name</label><input id=name value=Ada>
<button type=button id=save>Save</button><p id=notice role=status></p><p id=toast role=alert hidden></p>"""
_SAVE = """var retries = %d;
function post(attempt) { return fetch('/errors/api/save2', {method: 'POST', body: 'attempt=' + attempt}); }
function attempt(n) {
  return post(n).then(function (r) { return r.ok || n > retries ? r : attempt(n + 1); });
}
document.getElementById('save').onclick = function () {
  document.getElementById('notice').textContent = 'Changes saved';
  attempt(1).then(function (r) { if (!r.ok) throw new Error('HTTP ' + r.status); }).catch(function () {
    var toast = document.getElementById('toast');
    toast.textContent = "Couldn't save"; toast.hidden = false;
    setTimeout(function () { toast.hidden = true; }, %d);
  });
};"""
PAGES = {"toast": 0, "retry": 1}  # page -> how many times the app retries a failed save


def reply(method: str, url: str, body: bytes, page: Callable[..., bytes], stop: threading.Event) -> Reply:
    """The answer to a request under /errors/: a save's first attempt fails (after ANSWER_S), a retry succeeds."""
    path = urlsplit(url).path.removeprefix(PREFIX)
    if path == "api/save2" and method == "POST":
        stop.wait(ANSWER_S)
        if body == b"attempt=1":
            return 500, b'{"error": "database is read-only"}', JSON, {}
        return 200, b'{"saved": true}', JSON, {}
    if path == "basic":
        return 401, b"401 Unauthorized", "text/plain", {"WWW-Authenticate": f'Basic realm="{REALM}"'}
    if path in PAGES and method == "GET":
        return 200, page("Profile - Acme", _PROFILE, script=_SAVE % (PAGES[path], TOAST_MS)), HTML, {}
    return 404, b"<h1>Not Found</h1>", HTML, {}
