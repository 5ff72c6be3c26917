"""Fixture pages whose truth is a state, not a text (/states/...): a settings page with a dark-mode switch, a
checkbox, an expandable menu, a pressed toggle and a disabled button; and a docs page with two low-contrast links."""

from __future__ import annotations

from collections.abc import Callable

PREFIX = "/states/"

_SETTINGS = (
    """<main><h1>Settings</h1>
<p><button type=button role=switch id=dark aria-checked=false>Dark mode</button></p>
<p><label for=updates style="display:inline">Email me updates</label>
<input type=checkbox id=updates style="display:inline;width:auto"></p>
<p><button type=button id=menu aria-expanded=false aria-controls=menu-list>Menu</button></p>
<ul id=menu-list hidden><li><a href="#profile">Profile</a></li><li><a href="#billing">Billing</a></li></ul>
<p><button type=button id=bold aria-pressed=false>Bold</button> <button type=button disabled>Delete account</button></p>
<p><a href="#help-top">Help</a> · <a href="#help-bottom">Help</a></p></main>""",
    """document.getElementById('dark').onclick = function () {
  var on = this.getAttribute('aria-checked') !== 'true';
  this.setAttribute('aria-checked', String(on));
  document.documentElement.setAttribute('data-theme', on ? 'dark' : 'light');
};
document.getElementById('menu').onclick = function () {
  var open = this.getAttribute('aria-expanded') !== 'true';
  this.setAttribute('aria-expanded', String(open));
  document.getElementById('menu-list').hidden = !open;
};
document.getElementById('bold').onclick = function () {
  this.setAttribute('aria-pressed', String(this.getAttribute('aria-pressed') !== 'true'));
};
document.documentElement.setAttribute('data-theme', 'light');""",
)
# Docusaurus's shape: navbar links whose labels carry a hashed class, grey on white (2.32:1 and 2.15:1; 4.5:1 is due).
_DOCS = (
    """<main><h1>Docs</h1><nav aria-label=Sections><a href="#tutorial"><span class=linkLabel_WmDU
style="color:#aaaaaa">Tutorial</span></a> <a href="#blog"><span class=linkLabel_WmDU style="color:#b2b2b2">Blog</span></a>
</nav><p>Start here.</p></main>""",
    "",
)
_STYLE = "html[data-theme=dark] body{background:#111111;color:#eeeeee}"
PAGES = {"settings": ("Settings - Acme", _SETTINGS), "docs": ("Docs - Acme", _DOCS)}


def page_at(path: str, page: Callable[..., bytes]) -> bytes | None:
    """The page at `path` under /states/ (None: no such page), made with the site's own `page(title, body, script=)`."""
    found = PAGES.get(path.removeprefix(PREFIX))
    if found is None:
        return None
    title, (body, script) = found
    return page(title, f"<style>{_STYLE}</style>{body}", script=script)
