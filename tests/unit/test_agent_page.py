"""The page a step is judged on is the tab browser-use is on, even just after a click opened it (agent/adapter/live.py)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest

from preview_qa.agent.adapter.live import agent_page


class _Session:
    """browser-use's session as a click's new tab leaves it: switched to a tab whose URL it learns a moment later."""

    def __init__(self, urls: list[str]) -> None:
        self.urls = urls

    async def get_current_page_url(self) -> str:
        return self.urls.pop(0) if len(self.urls) > 1 else self.urls[0]


def _lease(*urls: str) -> Any:
    pages = [SimpleNamespace(url=u) for u in urls]
    return SimpleNamespace(pooled=SimpleNamespace(connected=True), context=SimpleNamespace(pages=pages))


def test_a_tab_whose_url_the_session_has_not_learned_yet_is_waited_for_not_guessed() -> None:
    lease = _lease("http://shop.test/help", "http://shop.test/todos")
    session = _Session(["", "about:blank", "http://shop.test/help"])
    page = asyncio.run(agent_page(session, lease))  # type: ignore[arg-type]
    assert page is lease.context.pages[0]  # not the last tab, which a guess on '' would have taken


def test_without_a_session_the_last_tab_is_the_page() -> None:
    lease = _lease("http://shop.test/a", "http://shop.test/b")
    assert asyncio.run(agent_page(None, lease)) is lease.context.pages[1]


@pytest.mark.parametrize(
    ("urls", "blank"),
    [
        (["about:blank"], 0),  # browser-use blocked the tab's navigation to another host and sent it there
        (["http://shop.test/checkout", "about:blank"], 1),  # the same for a popup
    ],
)
def test_a_tab_sent_to_about_blank_is_the_page_at_once(urls: list[str], blank: int) -> None:
    lease = _lease(*urls)
    session = _Session(["about:blank"])
    page = asyncio.run(asyncio.wait_for(agent_page(session, lease), 1.0))  # type: ignore[arg-type]
    assert page is lease.context.pages[blank]  # not after the 5 s bound
