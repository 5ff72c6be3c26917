"""Fixture pages for `preview-qa demo --plan` (issue #39): a blog whose posts are a route with a dynamic segment
(/blog/[slug]), its value found only as a link on the list."""

from __future__ import annotations

import html
from collections.abc import Callable
from urllib.parse import urlsplit

PREFIX = "/blog"
POSTS = {"dropping-anvils-safely": ("Dropping anvils safely", "Always shout a warning before you let go.")}


def reply(url: str, page: Callable[..., bytes]) -> tuple[int, bytes]:
    """The answer to a GET under /blog: the list of posts, or one post with its subscribe button."""
    slug = urlsplit(url).path.removeprefix(PREFIX).strip("/")
    if not slug:
        items = "".join(f'<li><a href="/blog/{s}">{html.escape(t)}</a></li>' for s, (t, _) in POSTS.items())
        return 200, page("Blog - Acme", f'<h1>Blog</h1><p><a href="/">Home</a></p><ul>{items}</ul>')
    if slug not in POSTS:
        return 404, b"<h1>Not Found</h1>"
    title, text = POSTS[slug]
    body = (
        f'<h1>{html.escape(title)}</h1><p><a href="/blog">All posts</a></p><p>{html.escape(text)}</p>'
        '<button type="button" onclick="this.nextElementSibling.textContent=\'Subscribed to the Acme blog\'">'
        "Subscribe</button><p role=status></p>"
    )
    return 200, page(f"{title} - Acme blog", body)
