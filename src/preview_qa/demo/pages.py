"""The demo shop's pages as HTML: the document every page is drawn in, and the home, login, signup, product, checkout,
help and not-found pages."""

from __future__ import annotations

import html

_STYLE = (
    "body{font-family:sans-serif;max-width:40rem;margin:2rem auto;line-height:1.5}"
    "label{display:block;margin-top:.8rem}input{display:block;padding:.3rem;width:16rem}"
    "button{margin-top:1rem;padding:.4rem 1rem}.error{color:#b00}table{border-collapse:collapse}"
    "td,th{border:1px solid #999;padding:.2rem .6rem}"
)

_BROKEN_JS = """
console.error("cart failed to load");
fetch("/api/cart").then(function (r) { return r.json(); }).then(function (cart) {
  document.getElementById("total").textContent = cart.total.amount;
});
throw new Error("TypeError: cart.total is undefined");
"""


def page(title: str, body: str, *, raw_title: bool = False, script: str = "", icon: bool = True) -> bytes:
    """A complete HTML document; `title` is escaped unless raw_title; without `icon` the browser asks for /favicon.ico."""
    t = title if raw_title else html.escape(title)
    js = f"<script>{script}</script>" if script else ""
    link = '<link rel="icon" href="data:,">' if icon else ""
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        f"{link}<title>{t}</title><style>{_STYLE}</style></head>"
        f"<body>{body}{js}</body></html>"
    ).encode()


def login_form(error: str = "", button: str = "Log in", action: str = "/login") -> bytes:
    err = f'<p class="error" role="alert">{html.escape(error)}</p>' if error else ""
    return page(
        "Log in - Acme",
        '<h1>Log in</h1><p><a href="/">Home</a></p>' + err + f'<form method="post" action="{action}">'
        '<label for="email">Email</label><input id="email" name="email" type="text" placeholder="Email">'
        '<label for="password">Password</label>'
        '<input id="password" name="password" type="password" placeholder="Password">'
        f'<button type="submit">{html.escape(button)}</button></form>',
    )


def signup_form(name: str = "", email: str = "", error: str = "", script: str = "") -> bytes:
    err = f'<p class="error" role="alert">{html.escape(error)}</p>' if error else ""
    return page(
        "Sign up - Acme",
        '<h1>Create your account</h1><p><a href="/">Home</a></p>' + err + '<form method="post" action="/signup" novalidate>'
        f'<label for="name">Name</label><input id="name" name="name" placeholder="Name" value="{html.escape(name)}">'
        '<label for="signup-email">Email</label>'
        f'<input id="signup-email" name="email" placeholder="Email" value="{html.escape(email)}">'
        '<button type="submit">Create account</button></form>',
        script=script,
    )


def home(links: list[tuple[str, str]]) -> bytes:
    """The home page, a list of (href, label) links."""
    return page(
        "Acme demo shop",
        "<h1>Acme demo shop</h1><p>A fixture app for preview-qa.</p><ul>"
        + "".join(f'<li><a href="{href}">{label}</a></li>' for href, label in links)
        + "</ul>",
    )


def product(script: str = "") -> bytes:
    return page(
        "Acme Anvil - Acme",
        '<h1>Acme Anvil</h1><p><a href="/">Home</a></p><p>A very heavy anvil, ideal for cartoons.</p>'
        '<p>Price: <strong id="price">$19.99</strong></p><p id="stock">In stock</p>',
        script=script,
    )


PRODUCT = product()
# `demo --explore`'s PR (DemoShop(breaks=True)): two regressions a sweep sees that no test of the demo looks at. The
# product page asks a stock API that answers 500 (the page shows its "In stock" all the same), and signup logs an error.
STOCK_API = "/api/stock"
PR_STOCK_JS = f"""fetch("{STOCK_API}").then(function (r) {{ return r.json(); }}).then(function (stock) {{
  if (stock.count) document.getElementById("stock").textContent = stock.count + " in stock";
}});"""
PR_SIGNUP_ERROR = "Signup: the password rules failed to load"
PR_SIGNUP_JS = f'console.error("{PR_SIGNUP_ERROR}");'

BROKEN = page(
    "Checkout - Acme",
    '<h1>Checkout</h1><p><a href="/">Home</a></p><p>Order total: <span id="total">…</span></p>'
    '<button type="button" id="pay">Pay now</button>',
    script=_BROKEN_JS,
)


HELP = page(
    "Help - Acme",
    '<h1>Help</h1><p>Type a todo and press Enter.</p><button type="button" id="ok" '
    "onclick=\"this.textContent='Thanks!'\">Got it</button>",
)

NOT_FOUND = page("Not Found", "<h1>Not Found</h1>")
