"""Which URLs are the browser's own icon fetches, never evidence about the app under test."""

from __future__ import annotations

import pytest

from preview_qa.agent.evidence.evidence import is_favicon


@pytest.mark.parametrize(
    "url",
    [
        "http://x/favicon.ico",
        "https://x/static/favicon-32x32.png?v=2",
        "http://x/apple-touch-icon.png",
        "http://x/icons/Icon-192.PNG",
        "http://x/img/site.ico",
    ],
)
def test_icon_urls_are_favicons(url: str) -> None:
    assert is_favicon(url)


@pytest.mark.parametrize(
    "url",
    [
        "http://x/api/cart",
        "http://x/iconify.js",
        "http://x/favicon.ico/api",
        "http://x/",
        "http://x/images/cart.png",
        "",
        "http://x/icons/",
    ],
)
def test_other_urls_are_not(url: str) -> None:
    assert not is_favicon(url)
