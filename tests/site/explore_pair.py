"""The fixture app pair of `preview-qa explore` (#68): a small shop served twice on 127.0.0.1, as the default branch
("main", the baseline) and as a pull request's preview ("pr"). The PR plants regressions a sweep sees (PR_ONLY, one
page each) and two that only someone using the page finds (AGENT_ONLY); both sides share two bugs (ON_BOTH); CLEAN
pages have nothing wrong on either side. Each plant is a thing a real PR does: a renamed global, an API that now
fails, a link to a page that was never there, an asset renamed without its users, a label unbound, a restyled block,
a logged error, a `startswith` for a `contains`, a count shown before it is incremented. Both sides serve
/sitemap.xml listing PAGES; /account, behind the demo shop's login, logs an error on pr that only a signed-in sweep sees."""

from __future__ import annotations

import contextlib
import html
import json
import uuid
from collections.abc import Iterator
from typing import Any, Literal, NamedTuple, cast
from urllib.parse import parse_qs, urlsplit

from preview_qa.demo.pages import NOT_FOUND, page
from preview_qa.demo.shop import ORDERS, DemoShop, ShopHandler

Side = Literal["main", "pr"]
MAIN: Side = "main"
PR: Side = "pr"

_NAMES = {  # the home page's nav: each other page and its label
    "/products": "Products",
    "/products/1": "Acme Anvil",
    "/cart": "Cart",
    "/orders": "Orders",
    "/about": "About",
    "/team": "Team",
    "/contact": "Contact",
    "/pricing": "Pricing",
    "/blog": "Blog",
    "/help": "Help",
    "/docs": "Docs",
    "/search": "Search",
}
PAGES = ("/", *_NAMES)  # every page of both sides, as each side's /sitemap.xml lists them
# The regressions a sweep sees, on pr only: finding kind -> the page it is on.
PR_ONLY = {
    "page_error": "/cart",  # an uncaught TypeError on load (a global renamed, its reader not)
    "http_error": "/orders",  # GET /api/orders answers 500
    "broken_link": "/about",  # "Meet the team" links /team-members, a 404 (main: /team)
    "broken_image": "/products",  # /img/anvil.svg answers 404 (the same <img> loads on main)
    "accessibility": "/contact",  # the email input's <label> lost its `for`: axe's `label` rule (critical)
    "visual": "/pricing",  # the plan banner recoloured (blue -> red) and moved below the table
    "console_error": "/help",  # console.error(HELP_ERROR)
}
# What else a sweep sees because of a plant (true, but not planted on its own): a failed image is a failed request
# too, and a page that lost what it shows looks different.
ALSO_ON_PR: dict[str, tuple[str, ...]] = {
    "/products": ("http_error", "visual"),  # the image's 404; the broken picture in its place
    "/orders": ("visual",),  # "Could not load your orders." where main shows the table
}
ALSO_ON_BOTH: dict[str, tuple[str, ...]] = {"/blog": ("http_error",)}  # the blog image's 404
# The regressions only a user of the page finds, on pr only: page -> what goes wrong.
AGENT_ONLY = {
    "/search": "searching 'mug' says 'No results'; main finds 'Blue mug'",
    "/products/1": "'Add to cart' once shows 'Cart: 0'; main shows 'Cart: 1'",
}
# Bugs main has too (each must come out `on_baseline`): (kind, page).
ON_BOTH = (
    ("broken_image", "/blog"),  # /img/blog-hero.png answers 404 on both sides (an http_error on both too)
    ("console_error", "/team"),  # console.error with a request id and a time that differ on every load
)

# Pages with no sweep finding on either side, the same on both (the last two hold AGENT_ONLY's bugs).
CLEAN = ("/", "/docs", "/products/1", "/search")

SEARCH_QUERY, SEARCH_FOUND, SEARCH_NONE = "mug", "Blue mug", "No results"
ADD_TO_CART, CART_COUNT = "Add to cart", "cart-count"  # the button's name, the id of the count it updates
HELP_ERROR = "Help: the search index failed to load"
ACCOUNT, ACCOUNT_ERROR = "/account", "Account: the saved addresses failed to load"  # behind the login, pr only
TEAM_ERROR = "Team roster failed to load (request id {id}, after {ms} ms)"  # the text as shown, {id} and {ms} filled in
ORDERS_API, PRODUCT_IMAGE, BLOG_IMAGE = "/api/orders", "/img/anvil.svg", "/img/blog-hero.png"
BLUE, RED = "#2563eb", "#dc2626"  # the pricing banner on main, on pr

HTML, JSON, SVG, XML = "text/html; charset=utf-8", "application/json", "image/svg+xml", "application/xml"
_PRODUCTS = (("1", "Acme Anvil", "$19.99"), ("2", "Blue mug", "$7.50"), ("3", "Rocket skates", "$89.00"))
_ANVIL = (
    b'<svg xmlns="http://www.w3.org/2000/svg" width="120" height="80" viewBox="0 0 120 80">'
    b'<rect width="120" height="80" fill="#e5e7eb"/><path d="M10 20h100l-20 20v25h-60v-25z" fill="#374151"/></svg>'
)
_HOME_LINK = '<p><a href="/">Home</a></p>'


def sweep_finds(side: Side) -> dict[str, frozenset[str]]:
    """Each page's finding kinds a sweep sees on `side`: every page's, empty for most (a visual one is pr's
    screenshot against main's, so only pr has one)."""
    found: dict[str, set[str]] = {path: set() for path in PAGES}
    for kind, path in ON_BOTH:
        found[path].add(kind)
    also = [ALSO_ON_BOTH]
    if side == PR:
        for kind, path in PR_ONLY.items():
            found[path].add(kind)
        also.append(ALSO_ON_PR)
    for kinds in also:
        for path, more in kinds.items():
            found[path].update(more)
    return {path: frozenset(kinds) for path, kinds in found.items()}


Page = tuple[str, str, str]  # title, body, script


def _home() -> Page:
    links = "".join(f'<li><a href="{path}">{name}</a></li>' for path, name in _NAMES.items())
    return "Acme shop", f'<h1>Acme shop</h1><nav aria-label="Main"><ul>{links}</ul></nav>', ""


def _products() -> Page:
    rows = "".join(
        f'<li><a href="/products/{n}">{name}</a> {price}</li>' if n == "1" else f"<li>{name} {price}</li>"
        for n, name, price in _PRODUCTS
    )
    image = f'<img src="{PRODUCT_IMAGE}" alt="Acme Anvil" width="120" height="80">'
    return "Products - Acme", f"<h1>Products</h1>{_HOME_LINK}<p>{image}</p><ul>{rows}</ul>", ""


def _product(side: Side) -> Page:
    # pr shows the count before adding one: "Cart: 0" after the first click
    add = "show(); count += 1;" if side == PR else "count += 1; show();"
    script = (
        f"var count = 0; var shown = document.getElementById('{CART_COUNT}');"
        " function show() { shown.textContent = 'Cart: ' + count; }"
        f" document.getElementById('add').onclick = function () {{ {add} }};"
    )
    body = (
        f"<h1>Acme Anvil</h1>{_HOME_LINK}<p>A very heavy anvil. Price: $19.99</p>"
        f'<button type="button" id="add">{ADD_TO_CART}</button><p id="{CART_COUNT}" role="status">Cart: 0</p>'
    )
    return "Acme Anvil - Acme", body, script


def _cart(side: Side) -> Page:
    # pr renamed the page's data to `basket` and left the analytics line reading `cart`: a TypeError on load
    data = "basket" if side == PR else "cart"
    script = (
        f"window.{data} = {{items: [{{name: 'Acme Anvil', price: 19.99}}]}}; window.dataLayer = [];"
        " window.dataLayer.push({event: 'view_cart', items: window.cart.items.length});"
    )
    body = f"<h1>Your cart</h1>{_HOME_LINK}<ul><li>Acme Anvil: $19.99</li></ul><p>Total: $19.99</p>"
    return "Cart - Acme", body, script


def _orders() -> Page:
    script = f"""fetch('{ORDERS_API}').then(function (r) {{
  if (!r.ok) throw new Error('HTTP ' + r.status);
  return r.json();
}}).then(function (orders) {{
  document.getElementById('orders').innerHTML = orders.map(function (o) {{
    return '<li>' + o.order + ' ' + o.item + ' ' + o.total + '</li>';
  }}).join('');
}}).catch(function () {{ document.getElementById('orders').innerHTML = '<li>Could not load your orders.</li>'; }});"""
    return "Orders - Acme", f'<h1>Your orders</h1>{_HOME_LINK}<ul id="orders"><li>Loading…</li></ul>', script


def _about(side: Side) -> Page:
    team = "/team-members" if side == PR else "/team"
    body = f'<h1>About Acme</h1>{_HOME_LINK}<p>Anvils since 1949.</p><p><a href="{team}">Meet the team</a></p>'
    return "About - Acme", body, ""


def _team() -> Page:
    script = (  # the id the server's, the time the browser's: both new on every load
        f"console.error({json.dumps(TEAM_ERROR)}.replace('{{id}}', '{uuid.uuid4()}')"
        ".replace('{ms}', String(Math.round(performance.now()))));"
    )
    return "Team - Acme", f"<h1>Our team</h1>{_HOME_LINK}<ul><li>Ada, anvils</li><li>Grace, rockets</li></ul>", script


def _contact(side: Side) -> Page:
    bound = "" if side == PR else ' for="email"'  # pr's label names no input: the input has no accessible name
    body = (
        f'<h1>Contact us</h1>{_HOME_LINK}<form method="get" action="/contact">'
        f'<label{bound}>Email</label><input id="email" name="email" type="email">'
        '<label for="message">Message</label><textarea id="message" name="message"></textarea>'
        '<button type="submit">Send</button></form>'
    )
    return "Contact - Acme", body, ""


def _pricing(side: Side) -> Page:
    style = "color:#fff;height:12rem;padding:1rem;font-size:2rem;background:" + (RED if side == PR else BLUE)
    banner = f'<div id="banner" style="{style}">Pro plan: $29 a month</div>'
    table = (
        "<table><tr><th>Plan</th><th>Price</th></tr><tr><td>Free</td><td>$0</td></tr><tr><td>Pro</td><td>$29</td></tr></table>"
    )
    content = table + banner if side == PR else banner + table  # pr moved the banner below the table
    return "Pricing - Acme", f"<h1>Pricing</h1>{_HOME_LINK}{content}", ""


def _blog() -> Page:
    body = (
        f'<h1>Blog</h1>{_HOME_LINK}<p><img src="{BLOG_IMAGE}" alt="Our new forge" width="200" height="100"></p>'
        "<h2>A new forge</h2><p>We opened a second forge this spring.</p>"
    )
    return "Blog - Acme", body, ""


def _help(side: Side) -> Page:
    script = f"console.error({json.dumps(HELP_ERROR)});" if side == PR else ""
    return "Help - Acme", f"<h1>Help</h1>{_HOME_LINK}<p>Questions? Write to us from the contact page.</p>", script


def _docs() -> Page:
    body = (
        f'<h1>Docs</h1>{_HOME_LINK}<p>How to order: pick a product, add it to your cart, pay.</p><p><a href="/help">Help</a></p>'
    )
    return "Docs - Acme", body, ""


def _search(side: Side, query: str) -> Page:
    q = query.strip().lower()
    # pr matches a name's start only: "mug" no longer finds "Blue mug"
    found = [name for _, name, _ in _PRODUCTS if (name.lower().startswith(q) if side == PR else q in name.lower())]
    items = "".join(f"<li>{html.escape(name)}</li>" for name in found)
    results = (f'<ul id="results">{items}</ul>' if found else f'<p id="results">{SEARCH_NONE}</p>') if q else ""
    body = (
        f'<h1>Search</h1>{_HOME_LINK}<form method="get" action="/search" role="search">'
        f'<label for="q">Search products</label><input id="q" name="q" type="search" value="{html.escape(query)}">'
        f'<button type="submit">Search</button></form>{results}'
    )
    return "Search - Acme", body, ""


def _account(side: Side) -> Page:
    # behind the login (not in the sitemap): pr logs an error only a signed-in user's page shows
    script = f"console.error({json.dumps(ACCOUNT_ERROR)});" if side == PR else ""
    return "Account - Acme", f"<h1>Your account</h1>{_HOME_LINK}<p>Signed in.</p>", script


def _page(side: Side, path: str, query: str) -> Page | None:
    pages = {
        "/": _home,
        "/products": _products,
        "/products/1": lambda: _product(side),
        "/cart": lambda: _cart(side),
        "/orders": _orders,
        "/about": lambda: _about(side),
        "/team": _team,
        "/contact": lambda: _contact(side),
        "/pricing": lambda: _pricing(side),
        "/blog": _blog,
        "/help": lambda: _help(side),
        "/docs": _docs,
        "/search": lambda: _search(side, query),
    }
    made = pages.get(path)
    return made() if made else None


def reply(side: Side, url: str, base_url: str) -> tuple[int, bytes, str]:
    """Status, body and content type of a GET of `url` (path and query) on `side`, served at `base_url`."""
    parts = urlsplit(url)
    path = parts.path
    if path == "/sitemap.xml":
        locs = "".join(f"<url><loc>{base_url}{p}</loc></url>" for p in PAGES)
        xml = f'<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{locs}</urlset>'
        return 200, xml.encode(), XML
    if path == ORDERS_API:
        if side == PR:
            return 500, b'{"error": "orders service unavailable"}', JSON
        orders = [{"order": n, "item": item, "total": total} for n, item, total in ORDERS]
        return 200, json.dumps(orders).encode(), JSON
    if path == PRODUCT_IMAGE and side == MAIN:  # pr renamed the asset and not the page using it
        return 200, _ANVIL, SVG
    query = (parse_qs(parts.query).get("q") or [""])[0]
    found = _page(side, path, query)
    if found is None:
        return 404, NOT_FOUND, HTML
    title, body, script = found
    return 200, page(title, body, script=script), HTML


class _Handler(ShopHandler):
    def get(self, path: str) -> bool:
        site = cast("ExploreSite", self.site)
        if path == "/login":  # the demo shop's (demo@acme.test and the shop's password), which redirects to /dashboard
            return super().get(path)
        if path == ACCOUNT:
            if not self._signed_in():
                self._redirect("/login")
                return True
            title, body, script = _account(site.side)
            self._send(200, page(title, body, script=script))
            return True
        status, body, ctype = reply(site.side, self.path, site.url)
        self._send(status, body, ctype=ctype)
        return True

    def post(self, path: str) -> bool:
        return path == "/login" and super().post(path)  # the contact and search forms are GETs


class ExploreSite(DemoShop):
    """One side of the pair: `side` is MAIN (the baseline) or PR (the preview). `start()` returns the base URL; every
    request is recorded in `requests` as the demo shop's are."""

    handler = _Handler

    def __init__(self, side: Side, port: int = 0) -> None:
        super().__init__(port=port)
        self.side = side


class PairUrls(NamedTuple):
    main: str  # the baseline's base URL
    pr: str  # the preview's


@contextlib.contextmanager
def serve_pair() -> Iterator[PairUrls]:
    """Both sides, each on a free port of 127.0.0.1, until the block ends."""
    with ExploreSite(MAIN) as main, ExploreSite(PR) as pr:
        yield PairUrls(main.url, pr.url)


# What a scripted charter agent reports (tests/e2e/test_explore_charters.py, bench/explore.py): AGENT_ONLY's two bugs,
# a claim that holds on neither side, and one main shares
MUG = f"searching '{SEARCH_QUERY}' finds nothing"
CART = "one click on 'Add to cart' shows Cart: 0"
BLUE = "searching 'blue' finds nothing"  # false: both sides find "Blue mug"
REVIEWS = "the product page shows no reviews"  # neither side has reviews: not the PR's doing


def _found(summary: str, steps: list[str], text: list[str]) -> dict[str, Any]:
    return {"summary": summary, "steps": steps, "expect_text": text, "expect_url": "", "expect_elements": []}


def _search_turns(query: str) -> dict[str, Any]:
    return {
        "name": f"search {query}",
        "match": f"Search for {query}",
        "turns": [
            {"actions": [{"input": {"element": "q", "text": query}}]},
            {"actions": [{"click": {"element": "submit"}}]},
            {"done": {"status": "pass", "reason": f"searched for {query}"}},
        ],
    }


CHARTERS = [  # the scripted agent of explore's charters on /search and /products/1, and of their repros' steps
    {
        "name": "charter /search",
        "match": "Use the page /search as",
        "turns": [
            {"actions": [{"input": {"element": "q", "text": SEARCH_QUERY}}]},
            {"actions": [{"click": {"element": "submit"}}]},
            {
                "done": {
                    "status": "pass",
                    "reason": "tried the search",
                    "data": {
                        "findings": [
                            _found(MUG, [f"Search for {SEARCH_QUERY}"], [SEARCH_FOUND]),
                            _found(BLUE, ["Search for blue"], [SEARCH_FOUND]),
                        ]
                    },
                }
            },
        ],
    },
    {
        "name": "charter /products/1",
        "match": "Use the page /products/1 as",
        "turns": [
            {"actions": [{"click": {"element": ADD_TO_CART}}]},
            {
                "done": {
                    "status": "pass",
                    "reason": "added the anvil",
                    "data": {
                        "findings": [
                            _found(CART, [f"Click {ADD_TO_CART} once"], ["Cart: 1"]),
                            _found(REVIEWS, [], ["Customer reviews"]),
                        ]
                    },
                }
            },
        ],
    },
    _search_turns(SEARCH_QUERY),
    _search_turns("blue"),
    {
        "name": "add to cart",
        "match": f"Click {ADD_TO_CART} once",
        "turns": [
            {"actions": [{"click": {"element": ADD_TO_CART}}]},
            {"done": {"status": "pass", "reason": "clicked it once"}},
        ],
    },
]


CHARTER_ROUTES = {"src/search/**": ["/search"], "src/product/**": ["/products/1"]}  # a manifest's routes: to chart
