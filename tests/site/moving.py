"""Fixture pages that keep moving after the first paint (/moving/...): an optimistic save that fails later, a session
check that bounces, a page that polls forever, text in frames and shadow roots, alert/confirm/prompt/beforeunload
flows, and a payment that says it is busy (a progressbar) while its server computes, nothing in flight on the network
(its answer comes on an EventSource, which settling never waits on). The save, the session check and the payment
answer when the test says (`?after=<signal>`, tests/site/signals.py), then `?ms=` later; without a signal, `ms` (or
SLOW_MS) after they were asked."""

from __future__ import annotations

import threading
from collections.abc import Callable
from urllib.parse import parse_qs, urlsplit

from tests.site.signals import Signals

PREFIX = "/moving/"
SLOW_MS = 3000  # how long the save and the session check take to answer, unless ?after= or ?ms= says otherwise

Reply = tuple[int, bytes, str]  # status, body, content type
Page = Callable[[str, str], bytes]  # (title, body, script) -> a complete HTML document, the site's own _page
HTML = "text/html; charset=utf-8"
JSON = "application/json"

_SAVE = (
    """<h1>Profile</h1><label for=name>Name</label><input id=name value=Ada>
<button type=button id=save>Save</button><p id=notice role=status></p>""",
    """document.getElementById('save').onclick = function () {
  var notice = document.getElementById('notice'); notice.textContent = 'Saved!';
  fetch('/moving/api/save' + location.search, {method: 'POST'})
    .then(function (r) { if (!r.ok) throw new Error('HTTP ' + r.status); })
    .catch(function () { notice.textContent = 'Save failed'; });
};""",
)
_DASHBOARD = (
    "<h1>Dashboard</h1><p id=who>Signed in as demo@acme.test</p>",
    """fetch('/moving/api/session' + location.search)
  .then(function (r) { if (r.status === 401) location.href = '/moving/signin'; });""",
)
_SIGNIN = ("<h1>Sign in</h1><p>Your session has expired. Please sign in again.</p>", "")
_POLL = (
    "<h1>Live scores</h1><p>Live</p><p id=tick>0</p>",
    """var n = 0; function poll() {
  fetch('/moving/api/poll').then(function () { document.getElementById('tick').textContent = ++n; });
} poll(); setInterval(poll, 500);""",
)
_WIDGET = ("<p>Payment received</p><p style='display:none'>Refund pending</p>", "")
_CARD = ("<p>Card verified</p>", "")
_INVITE = (
    """<h1>Team</h1><button type=button id=invite>Invite Ada</button><p id=sent role=status></p>""",
    """document.getElementById('invite').onclick = function () {
  alert('Invite sent to Ada');
  document.getElementById('sent').textContent = 'Invite acknowledged';
};""",
)
_DELETE = (
    """<h1>Items</h1><ul id=items><li id=anvil>Anvil</li><li>Rocket skates</li></ul>
<button type=button id=delete>Delete Anvil</button><p id=said role=status></p>""",
    """document.getElementById('delete').onclick = function () {
  if (confirm('Delete Anvil?')) { document.getElementById('anvil').remove();
    document.getElementById('said').textContent = 'Anvil deleted'; }
  else { document.getElementById('said').textContent = 'Delete cancelled'; }
};""",
)
_RENAME = (
    """<h1>Project</h1><p id=name>Name: Untitled</p><button type=button id=rename>Rename</button>""",
    """document.getElementById('rename').onclick = function () {
  var name = prompt('New name?', 'Untitled');
  document.getElementById('name').textContent = name === null ? 'Rename cancelled' : 'Name: ' + name;
};""",
)
_EDITOR = (
    """<h1>Editor</h1><button type=button id=edit>Edit draft</button><p id=state role=status></p>
<p><a href=/moving/left>Go home</a></p>""",
    """document.getElementById('edit').onclick = function () {
  document.getElementById('state').textContent = 'Unsaved changes';
  window.addEventListener('beforeunload', function (e) { e.preventDefault(); e.returnValue = ''; });
};""",
)
_LEFT = ("<h1>Home</h1><p>You left the editor</p>", "")
# Beside the payment, what says nothing is in progress: a determinate bar that sits at 70%, a spinner that is hidden.
_PAY = (
    """<h1>Checkout</h1><div role=progressbar aria-valuenow=70 aria-valuemin=0 aria-valuemax=100>Profile 70% complete</div>
<div role=progressbar aria-busy=true style="display:none">Loading…</div>
<button type=button id=pay>Pay</button><div id=state></div>""",
    """document.getElementById('pay').onclick = function () {
  var state = document.getElementById('state');
  state.innerHTML = '<div role=progressbar aria-busy=true>Processing payment…</div>';
  var answer = new EventSource('/moving/api/pay' + location.search);
  answer.onmessage = function (e) { answer.close(); state.textContent = e.data; };
};""",
)


def frames_page(other_origin: str) -> tuple[str, str]:
    """A checkout whose payment widget is a same-origin frame, whose card check is a cross-origin one, and whose
    order number lives in an open shadow root."""
    return (
        f"""<h1>Checkout</h1><iframe title=payment src=/moving/widget></iframe>
<iframe title=card src="{other_origin}/moving/card"></iframe><div id=host></div>""",
        "document.getElementById('host').attachShadow({mode: 'open'}).innerHTML = '<p>Order number 1042</p>';",
    )


PAGES = {
    "save": ("Profile - Acme", _SAVE),
    "dashboard": ("Dashboard - Acme", _DASHBOARD),
    "signin": ("Sign in - Acme", _SIGNIN),
    "poll": ("Live - Acme", _POLL),
    "widget": ("Payment", _WIDGET),
    "card": ("Card", _CARD),
    "invite": ("Team - Acme", _INVITE),
    "delete": ("Items - Acme", _DELETE),
    "rename": ("Project - Acme", _RENAME),
    "editor": ("Editor - Acme", _EDITOR),
    "left": ("Home - Acme", _LEFT),
    "pay": ("Checkout - Acme", _PAY),
}


def _slowly(url: str, stop: threading.Event, signals: Signals) -> None:
    """A slow API's wait: for the test's signal `after` if the URL names one, then `ms` (0 after a signal, else
    SLOW_MS); cut short when the site stops."""
    query = parse_qs(urlsplit(url).query)
    after, asked = (query.get("after") or [""])[0], (query.get("ms") or [""])[0]
    if after and not signals.wait(after):
        return
    stop.wait((int(asked) if asked.isdigit() else 0 if after else SLOW_MS) / 1000)


def reply(method: str, url: str, other_origin: str, page: Callable[..., bytes], stop: threading.Event, signals: Signals) -> Reply:
    """The answer to a request under /moving/ (the slow APIs answer as `_slowly` says)."""
    path = urlsplit(url).path.removeprefix(PREFIX)
    if path == "api/save" and method == "POST":
        _slowly(url, stop, signals)
        return 500, b'{"error": "database is read-only"}', JSON
    if path == "api/session":
        _slowly(url, stop, signals)
        return 401, b'{"error": "session expired"}', JSON
    if path == "api/pay":  # the server's verdict on the payment, on the page's EventSource; `retry`: never asked again
        _slowly(url, stop, signals)
        return 200, b"retry: 600000\ndata: Payment declined by your bank.\n\n", "text/event-stream"
    if path == "api/poll":  # a slow backend: a poll is always in flight, even if the tab's timers are throttled to 1 s
        stop.wait(0.7)
        return 200, b'{"ok": true}', JSON
    if path == "frames" and method == "GET":
        body, script = frames_page(other_origin)
        return 200, page("Checkout - Acme", body, script=script), HTML
    if path in PAGES and method == "GET":
        title, (body, script) = PAGES[path]
        return 200, page(title, body, script=script), HTML
    return 404, b"<h1>Not Found</h1>", HTML
