"""A settings page that saves (/settings, POST /api/settings) for --prove: the page shows what the server saved only
from the save's own answer, so a test that checks it fails when the save is broken, and one that checks only the URL
does not."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable

PAGE, API = "/settings", "/api/settings"
HTML = "text/html; charset=utf-8"

_BODY = """<h1>Settings</h1><label for=name>Display name</label><input id=name>
<button type=button id=save>Save</button><p id=status role=status></p>
<footer><p>Your settings are kept safe by Acme.</p></footer>"""
_SAVE = """document.getElementById('save').onclick = function () {
  var status = document.getElementById('status');
  fetch('/api/settings', {method: 'POST', headers: {'Content-Type': 'application/json'},
                          body: JSON.stringify({name: document.getElementById('name').value})})
    .then(function (r) { if (!r.ok) throw new Error('HTTP ' + r.status); return r.text(); })
    .then(function (text) {
      var saved = text ? JSON.parse(text) : {};
      status.textContent = saved.name ? 'Saved display name: ' + saved.name : 'Settings saved';
    })
    .catch(function () { status.textContent = "Couldn't save your settings"; });
};"""


def owns(path: str) -> bool:
    return path in (PAGE, API)


def reply(
    method: str, path: str, body: bytes, page: Callable[..., bytes], saved: dict[str, str], lock: threading.Lock
) -> tuple[int, bytes, str]:
    """The settings page (GET), or the save (POST /api/settings), which answers with what it saved."""
    if method == "GET" and path == PAGE:
        return 200, page("Settings - Acme", _BODY, script=_SAVE), HTML
    if method == "POST" and path == API:
        try:
            name = str(json.loads(body or b"{}").get("name", "")).strip()
        except (ValueError, AttributeError):
            return 400, b'{"error": "not JSON"}', "application/json"
        with lock:
            saved["name"] = name
        return 200, json.dumps({"name": name}).encode(), "application/json"
    return 405, b'{"error": "method not allowed"}', "application/json"
