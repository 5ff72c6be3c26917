"""The browser pool in a real Chromium: a lease's cookies and storage are gone for the next lease in the same browser; a
browser in which a test left anything outside its own context, or that died, is retired and replaced; nothing runs after
the pool closes."""

from __future__ import annotations

import asyncio
from pathlib import Path

import psutil
import pytest
from playwright.async_api import Playwright, async_playwright

from preview_qa.agent.browser import BrowserSetup, start_gate
from preview_qa.agent.pool import BrowserPool
from preview_qa.config import find_chromium
from preview_qa.demo.site import DemoSite

pytestmark = pytest.mark.e2e


def running(pool: BrowserPool) -> list[int]:
    return [p.pid for b in pool._running for p in b.processes.find()]


async def with_pool(size: int, test: object, tmp_path: Path) -> None:
    async with async_playwright() as playwright:

        async def driver() -> Playwright:
            return playwright

        setup = BrowserSetup(chromium=find_chromium() or "/usr/bin/chromium")
        pool = BrowserPool(driver, setup, size, start_gate(), str(tmp_path))
        pids: list[int] = []
        try:
            await test(pool, pids)  # type: ignore[operator]
        finally:
            await pool.close()
        await asyncio.sleep(0.5)
        assert pids, "no browser process was ever seen: the test proved nothing"
        assert not [pid for pid in pids if psutil.pid_exists(pid) and psutil.Process(pid).status() != "zombie"]


def test_the_next_lease_in_the_same_browser_starts_with_nothing(site: DemoSite, tmp_path: Path) -> None:
    async def test(pool: BrowserPool, pids: list[int]) -> None:
        async with pool.lease() as first:
            pids += running(pool)
            await first.page.goto(f"{site.url}/basket")
            await first.page.click("text=Add to cart")
            await first.page.click("text=Save for later")
            assert await first.page.inner_text("#items") == "Cart: 1 item(s)"
            assert await first.page.evaluate("localStorage.getItem('acme_cart_saved')") == "1"
        async with pool.lease() as second:
            assert second.pooled is first.pooled  # the same browser ...
            await second.page.goto(f"{site.url}/basket")
            assert await second.page.inner_text("#items") == "Cart: 0 item(s)"  # ... and not its cookie
            assert await second.page.evaluate("localStorage.getItem('acme_cart_saved')") is None  # nor its storage
            assert await second.context.cookies() == []
        assert (pool.launches, pool.retired) == (1, [])

    asyncio.run(with_pool(1, test, tmp_path))


def test_a_browser_with_a_page_left_outside_the_tests_context_is_retired(site: DemoSite, tmp_path: Path) -> None:
    async def test(pool: BrowserPool, pids: list[int]) -> None:
        async with pool.lease() as first:
            pids += running(pool)
            cdp = await first.browser.new_browser_cdp_session()
            await cdp.send("Target.createTarget", {"url": f"{site.url}/basket"})  # the shared default context
        async with pool.lease() as second:
            assert second.pooled is not first.pooled
            pids += running(pool)
        assert pool.launches == 2 and pool.retired == ["1 page(s) or worker(s) were left open"]

    asyncio.run(with_pool(1, test, tmp_path))


def test_a_browser_that_died_is_replaced(site: DemoSite, tmp_path: Path) -> None:
    async def test(pool: BrowserPool, pids: list[int]) -> None:
        async with pool.lease() as first:
            pids += running(pool)
            await first.pooled.processes.end()
        async with pool.lease() as second:
            pids += running(pool)
            await second.page.goto(f"{site.url}/basket")
            assert await second.page.inner_text("#items") == "Cart: 0 item(s)"
        assert pool.launches == 2 and pool.retired == ["it disconnected or crashed"]

    asyncio.run(with_pool(1, test, tmp_path))


def test_no_more_browsers_than_the_pool_size_and_each_lease_its_own_context(site: DemoSite, tmp_path: Path) -> None:
    async def test(pool: BrowserPool, pids: list[int]) -> None:
        async def one(n: int) -> str:
            async with pool.lease() as lease:
                pids.extend(running(pool))
                await lease.page.goto(f"{site.url}/basket")
                for _ in range(n % 3):
                    await lease.page.click("text=Add to cart")
                await asyncio.sleep(0.2)
                return await lease.page.inner_text("#items")

        found = await asyncio.gather(*(one(n) for n in range(6)))
        assert found == [f"Cart: {n % 3} item(s)" for n in range(6)]
        assert pool.launches == 2 and pool.retired == []

    asyncio.run(with_pool(2, test, tmp_path))


def test_replays_share_one_browser_each_in_its_own_context_and_an_agent_test_has_one_alone(
    site: DemoSite, tmp_path: Path
) -> None:
    async def test(pool: BrowserPool, pids: list[int]) -> None:
        async def replay(n: int) -> tuple[str, object]:
            async with pool.lease(shared=True) as lease:
                pids.extend(running(pool))
                await lease.page.goto(f"{site.url}/basket")
                for _ in range(n):
                    await lease.page.click("text=Add to cart")
                await asyncio.sleep(0.5)  # all three hold the browser at once
                return await lease.page.inner_text("#items"), lease.pooled

        found = await asyncio.gather(*(replay(n) for n in range(3)))
        assert [text for text, _ in found] == [f"Cart: {n} item(s)" for n in range(3)]  # none sees another's cart
        assert len({id(pooled) for _, pooled in found}) == 1 and pool.launches == 1
        async with pool.lease(shared=True) as shared, pool.lease() as alone:
            assert alone.pooled is not shared.pooled  # an agent test never joins a browser in use
            pids.extend(running(pool))
        async with pool.lease() as alone, pool.lease(shared=True) as shared:
            assert alone.pooled is not shared.pooled  # nor does a replay join an agent test's browser
        assert pool.launches == 2 and pool.retired == []

    asyncio.run(with_pool(2, test, tmp_path))


def test_a_browser_for_replays_is_launched_by_playwright_and_closed_when_an_agent_test_needs_room(
    site: DemoSite, tmp_path: Path
) -> None:
    async def test(pool: BrowserPool, pids: list[int]) -> None:
        async with pool.lease(shared=True) as replay:
            pids.extend(running(pool))
            assert replay.cdp_url is None  # Playwright's own pipe: no port, no browser-use session
            await replay.page.goto(f"{site.url}/basket")
        async with pool.lease() as alone:  # the pool holds one browser: the idle replays' one makes room
            pids.extend(running(pool))
            assert alone.pooled is not replay.pooled and alone.cdp_url is not None
            assert list(pool._running) == [alone.pooled]
        assert pool.launches == 2 and pool.retired == []

    asyncio.run(with_pool(1, test, tmp_path))
