"""What the request policy (agent/guards/network.py) costs a page load: a page of 50 requests (its document, 39 images, 10 of
them from a second host, as a CDN's, and 10 fetches its script makes, as an app's API calls), loaded in a fresh context
with and without the policy, in turns, on real Chromium. The anchor is the same load without it; the goal is under 5%.
Prints figures; asserts nothing."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from playwright.async_api import Browser, async_playwright

from preview_qa.agent.guards.network import RequestPolicy
from preview_qa.secrets.redact import Redactor

PIXEL = bytes.fromhex("47494638396101000100800000000000ffffff21f90401000000002c00000000010001000002024401003b")
REQUESTS, ELSEWHERE, FETCHES = 50, 10, 10


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # kept-alive connections, as a real server's

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        port = self.server.server_address[1]
        if self.path.startswith("/page"):
            images = [
                f"/img/{i}.gif" if i >= ELSEWHERE else f"http://localhost:{port}/img/{i}.gif"
                for i in range(REQUESTS - 1 - FETCHES)
            ]
            calls = ",".join(f"fetch('/api/{i}').then(r => r.blob())" for i in range(FETCHES))
            body = (
                "<!doctype html><title>50</title>"
                + "".join(f'<img src="{src}">' for src in images)
                + f"<script>window.fetched = Promise.all([{calls}]);</script>"
            ).encode()
            ctype = "text/html"
        else:
            body, ctype = PIXEL, "image/gif"
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        with contextlib.suppress(ConnectionError):  # a context closed before its last image arrived
            self.wfile.write(body)


async def load(browser: Browser, url: str, policy: bool) -> tuple[float, float]:
    """The seconds to set a fresh context up (the policy's route and its page's redirect guard: once per test) and to
    load the page in it."""
    start = time.perf_counter()
    context = await browser.new_context()
    rules = RequestPolicy("bench", ["127.0.0.1"], Redactor({"pw": "s3cr3t-Pa55-word-4242"}), lambda _: None)
    if policy:
        await rules.install(context)
    page = await context.new_page()
    if policy:
        await asyncio.gather(*rules.guarding)
    ready = time.perf_counter()
    await page.goto(url, wait_until="load")
    await page.evaluate("window.fetched.then(() => 0)")  # the fetches' ends, which the load event does not wait for
    took = time.perf_counter() - ready
    await context.close()
    return ready - start, took


async def main(chromium: str, rounds: int) -> dict[str, list[float]]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/page"
    times: dict[str, list[float]] = {"without": [], "with": [], "set-up without": [], "set-up with": []}
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        for kind in ("without", "with"):  # warm-up
            await load(browser, url, kind == "with")
        for round_ in range(rounds):
            for kind in ("without", "with") if round_ % 2 else ("with", "without"):  # neither always goes first
                setup, took = await load(browser, url, kind == "with")
                times[kind].append(took)
                times[f"set-up {kind}"].append(setup)
        await browser.close()
    server.shutdown()
    return times


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    times = asyncio.run(main(args.chromium, args.rounds))
    for kind, values in times.items():
        what = (
            "a fresh context and page"
            if kind.startswith("set-up")
            else f"page of {REQUESTS} requests ({ELSEWHERE} from another host, {FETCHES} fetches)"
        )
        print(
            f"{what}, {kind.removeprefix('set-up ')} the policy: median {statistics.median(values) * 1000:6.1f} ms "
            f"over {len(values)}"
        )
    cost = statistics.median(times["with"]) / statistics.median(times["without"]) - 1
    paired = statistics.median(w - o for w, o in zip(times["with"], times["without"], strict=True))
    print(f"cost: {cost:+.1%} of the median load, {paired * 1000:+.1f} ms per load paired (goal: under 5%)")
