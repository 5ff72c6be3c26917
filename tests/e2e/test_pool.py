"""The browser pool in a real Chromium: a lease's cookies and storage are gone for the next lease in the same browser;
tests share a browser, and browser-use's sessions in it see only their own contexts; a browser in which a test left
anything outside its own context, or that died, is retired and replaced; nothing runs after the pool closes."""

from __future__ import annotations

import asyncio
import functools
import os
import threading
from http.server import ThreadingHTTPServer
from pathlib import Path

import cdp_use.client
import psutil
import pytest
import websockets
from playwright.async_api import Dialog, Page, Playwright, async_playwright

from preview_qa.agent.adapter import patches
from preview_qa.agent.adapter.build import session_profile
from preview_qa.agent.adapter.connect import start_session
from preview_qa.agent.browsers import launch, leftovers
from preview_qa.agent.browsers.chromium import find_chromium
from preview_qa.agent.browsers.context_scope import OutOfContext
from preview_qa.agent.browsers.launch import BrowserSetup, BrowserStartError, start_gate
from preview_qa.agent.browsers.pool import BrowserPool
from tests.fakes.chromium import NoHandshake
from tests.site import DemoSite
from tests.site.todo import CART_COOKIE

pytestmark = pytest.mark.e2e


def running(pool: BrowserPool) -> list[int]:
    return [p.pid for b in pool._running for p in b.processes.find()]


async def with_pool(size: int, test: object, tmp_path: Path) -> None:
    async with async_playwright() as playwright:

        async def driver() -> Playwright:
            return playwright

        setup = BrowserSetup(chromium=find_chromium(None, os.environ))
        pool = BrowserPool(driver, setup, size, start_gate())
        pids: list[int] = []
        try:
            await test(pool, pids)  # type: ignore[operator]
        finally:
            await pool.close()
        assert pids, "no browser process was ever seen: the test proved nothing"
        assert await gone(pids) == []


async def gone(pids: list[int], within_s: float = 5.0) -> list[int]:
    """The processes of `pids` still running once they have all ended, or `within_s` passed (the kernel's moment to
    reap them): a look every 50 ms, not a fixed wait."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within_s
    while (left := [pid for pid in pids if _running(pid)]) and loop.time() < deadline:
        await asyncio.sleep(0.05)
    return left


def _running(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


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


def test_a_page_left_outside_a_tests_context_while_others_run_keeps_the_next_test_out(site: DemoSite, tmp_path: Path) -> None:
    async def test(pool: BrowserPool, pids: list[int]) -> None:
        async with pool.lease() as stays:
            pids += running(pool)
            async with pool.lease() as leaves:
                assert leaves.pooled is stays.pooled
                cdp = await leaves.browser.new_browser_cdp_session()
                await cdp.send("Target.createTarget", {"url": f"{site.url}/basket"})  # the shared default context
            async with pool.lease() as after:
                assert after.pooled is not stays.pooled  # checked as the test ended, not once the browser emptied
                assert stays.pooled.doomed == "1 page(s) or worker(s) were left open"
                pids += running(pool)
        assert pool.launches == 2

    asyncio.run(with_pool(2, test, tmp_path))


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


def test_a_browser_that_stops_answering_is_retired_in_bounded_time(
    site: DemoSite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for module in (launch, leftovers):  # the polite steps' bound, smaller: what is tested is that each step has one
        monkeypatch.setattr(module, "CLOSE_TIMEOUT_S", 0.5)

    async def test(pool: BrowserPool, pids: list[int]) -> None:
        async with pool.lease() as first:
            pids += running(pool)
            for proc in first.pooled.processes.find():  # wedged: its processes alive, none of them answering
                proc.suspend()
        clock = asyncio.get_running_loop().time()
        async with pool.lease() as second:
            assert asyncio.get_running_loop().time() - clock < 20
            pids += running(pool)
            await second.page.goto(f"{site.url}/basket")
            assert await second.page.inner_text("#items") == "Cart: 0 item(s)"
        assert pool.launches == 2 and pool.retired == ["it could not be inspected (TimeoutError)"]

    asyncio.run(with_pool(1, test, tmp_path))


def test_leases_at_once_share_one_browser_each_in_its_own_context(site: DemoSite, tmp_path: Path) -> None:
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
        assert found == [f"Cart: {n % 3} item(s)" for n in range(6)]  # none sees another's cart
        assert pool.launches == 1 and pool.retired == []  # all six joined the first browser

    asyncio.run(with_pool(2, test, tmp_path))


async def target_id(page: Page) -> str:
    cdp = await page.context.new_cdp_session(page)
    try:
        return str((await cdp.send("Target.getTargetInfo"))["targetInfo"]["targetId"])
    finally:
        await cdp.detach()


def test_two_agents_in_one_browser_each_see_only_their_own_context(site: DemoSite, tmp_path: Path) -> None:
    """browser-use's sessions of two tests at once in one browser: each lists, reads and hears only its own context's
    tabs, cookies and downloads, and what it would do browser-wide outside its context is refused."""
    patches.apply()

    async def test(pool: BrowserPool, pids: list[int]) -> None:
        async with pool.lease() as a, pool.lease() as b:
            assert a.pooled is b.pooled
            pids.extend(running(pool))
            agents = {
                name: await start_session(lease, session_profile(True, ["127.0.0.1"], str(tmp_path / name), lease.cdp_url))
                for name, lease in (("a", a), ("b", b))
            }
            await b.page.goto(f"{site.url}/basket")
            await b.page.click("text=Add to cart")  # a cookie in b's context
            second = await b.context.new_page()  # a second tab in b's context, opened after both sessions started
            await second.set_content('<a id="file" download="b.txt" href="data:text/plain,b">file</a>')
            async with second.expect_download():
                await second.click("#file")  # a download in b's context
            for _ in range(100):  # b's session hears of it as the download ends
                if agents["b"].downloaded_files:
                    break
                await asyncio.sleep(0.1)
            tabs = {name: {tab.target_id for tab in await agent.get_tabs()} for name, agent in agents.items()}
            assert tabs == {"a": {await target_id(a.page)}, "b": {await target_id(b.page), await target_id(second)}}
            assert await agents["a"].cookies() == [] and [c["name"] for c in await agents["b"].cookies()] == [CART_COOKIE]
            assert agents["a"].downloaded_files == [] and [Path(f).name for f in agents["b"].downloaded_files] == ["b.txt"]
            with pytest.raises(OutOfContext):
                await agents["a"].cdp_client.send.Target.closeTarget(params={"targetId": await target_id(b.page)})
            with pytest.raises(OutOfContext):
                await agents["a"].cdp_client.send.Browser.close()
            assert agents["a"].refused == ["Target.closeTarget", "Browser.close"] and agents["b"].refused == []
            assert not b.page.is_closed() and await b.page.inner_text("#items") == "Cart: 1 item(s)"
            heard: dict[str, list[str]] = {"a": [], "b": []}

            async def answer(dialog: Dialog, name: str) -> None:
                heard[name].append(dialog.message)
                await dialog.dismiss()

            for name, lease in (("a", a), ("b", b)):
                lease.context.on("dialog", lambda dialog, name=name: answer(dialog, name))
            await b.page.evaluate("alert('for b')")  # a dialog in b's context: heard there only
            assert heard == {"a": [], "b": ["for b"]}
        assert pool.launches == 1 and pool.retired == []

    asyncio.run(with_pool(1, test, tmp_path))


def test_a_replay_and_an_agent_share_the_browser_playwright_launched_with_a_port_on_the_loopback(
    site: DemoSite, tmp_path: Path
) -> None:
    patches.apply()

    async def test(pool: BrowserPool, pids: list[int]) -> None:
        async with pool.lease() as replay:
            pids.extend(running(pool))
            await replay.page.goto(f"{site.url}/basket")
            async with pool.lease() as agent:
                assert agent.pooled is replay.pooled and agent.cdp_url.startswith("ws://127.0.0.1:")
                profile = session_profile(True, ["127.0.0.1"], str(tmp_path / "agent"), agent.cdp_url)
                session = await start_session(agent, profile)
                await session.navigate_to(f"{site.url}/product")
                assert [t.url for t in await session.get_tabs()] == [f"{site.url}/product"]
        assert pool.launches == 1 and pool.retired == []


def test_a_browser_browser_use_cannot_connect_to_errors_the_test_after_two_tries_and_is_retired(
    site: DemoSite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A DevTools endpoint that never completes its WebSocket handshake (as on a machine too busy to answer). Each try
    gives up after 2 s, not the websockets library's 10: the handshake never completes, so only the wait is shorter."""
    patches.apply()
    monkeypatch.setattr(cdp_use.client.websockets, "connect", functools.partial(websockets.connect, open_timeout=2))
    server = ThreadingHTTPServer(("127.0.0.1", 0), NoHandshake)
    threading.Thread(target=server.serve_forever, daemon=True).start()

    async def test(pool: BrowserPool, pids: list[int]) -> None:
        async with pool.lease() as lease:
            pids.extend(running(pool))
            hanging = f"http://127.0.0.1:{server.server_address[1]}"
            with pytest.raises(BrowserStartError) as stopped:
                await start_session(lease, session_profile(True, ["127.0.0.1"], str(tmp_path / "agent"), hanging))
        assert str(stopped.value).startswith("browser-use could not connect to the browser: ")
        assert str(stopped.value).endswith(" (2 tries)")
        async with pool.lease() as after:
            assert after.pooled is not lease.pooled  # the browser it could not connect to is not handed on
        assert pool.retired == ["browser-use could not connect to it"]

    try:
        asyncio.run(with_pool(1, test, tmp_path))
    finally:
        server.shutdown()


def test_the_runs_first_browser_starts_before_a_test_asks_and_the_runs_end_makes_no_next_context(
    site: DemoSite, tmp_path: Path
) -> None:
    """warm(): the first browser starts while the run does something else, and the first lease joins it (no second
    launch). close() as the last test's cleanup runs: no next test's context is made, no browser is checked for one."""

    async def test(pool: BrowserPool, pids: list[int]) -> None:
        pool.warm()
        while not pool._running:  # nobody has asked yet: it starts all the same
            await asyncio.sleep(0.05)
        pids += running(pool)
        made: list[str] = []
        make = pool._new_context
        pool._new_context = lambda pooled, options: made.append("context") or make(pooled, options)  # type: ignore[method-assign]
        async with pool.lease() as lease:
            assert (pool.launches, lease.launch_s) == (1, 0.0)  # the warm browser: its launch was no test's
            await lease.page.goto(f"{site.url}/basket")
        await pool.close()  # at once: as the run ends, its last test's cleanup still under way
        assert made == ["context"]  # the test's own; none for a next test
        assert pool.retired == [] and not pool._running

    asyncio.run(with_pool(1, test, tmp_path))
