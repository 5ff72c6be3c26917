"""End to end, many browsers: a run of short tests and a run that starts many browsers at once on 2 cores both end
with the process exited, every test passed, no process of any browser nor any file left in TMPDIR, and no request
sent to a host outside the test's (bench/soak.py is the long version). Chromium runs through a wrapper that maps
every host but the fixture site's to a listener: a connection there is a request our tooling made on its own
(browser-use's loading page fetches its logo from its CDN, for one)."""

from __future__ import annotations

import contextlib
import json
import re
import socket
import ssl
import stat
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from preview_qa.demo.scripted_llm import ScriptedLLM
from preview_qa.demo.site import DemoSite
from tests.e2e.processes import QUICK, left_behind, run_env, short_tests, start_cli

pytestmark = pytest.mark.e2e


class OutsideHosts:
    """A TCP listener standing in for every host outside the fixture site's: what each connection sent first (a TLS
    hello names its host), so that a request that left is seen, not lost to a failed DNS look-up."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.seen: list[bytes] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(2)
                first = b""
                with contextlib.suppress(OSError):
                    while chunk := conn.recv(65536):  # a TLS hello with post-quantum key shares passes 2 KB
                        first += chunk
                        if _complete(first):
                            break
                self.seen.append(first)


def _complete(first: bytes) -> bool:
    """Whether a connection's first bytes hold a whole HTTP request head or a whole TLS record."""
    if first[:1] == b"\x16":
        return len(first) >= 5 and len(first) >= 5 + int.from_bytes(first[3:5], "big")
    return b"\r\n\r\n" in first


def _sni(hello: bytes) -> str | None:
    """The server name a TLS ClientHello record carries (RFC 8446 4.1.2, RFC 6066 3). Chromium shuffles its extensions
    and pads them with random GREASE values, so the name is read from its extension, never searched for."""
    try:
        at = 5 + 4 + 2 + 32  # record header, handshake header, legacy version, random
        at += 1 + hello[at]  # session id
        at += 2 + int.from_bytes(hello[at : at + 2], "big")  # cipher suites
        at += 1 + hello[at]  # compression methods
        end = at + 2 + int.from_bytes(hello[at : at + 2], "big")
        at += 2
        while at + 4 <= end:
            kind, size = int.from_bytes(hello[at : at + 2], "big"), int.from_bytes(hello[at + 2 : at + 4], "big")
            if kind == 0:  # server_name: list length, name type (0: host name), name length, name
                return hello[at + 9 : at + 9 + int.from_bytes(hello[at + 7 : at + 9], "big")].decode("ascii")
            at += 4 + size
    except (IndexError, UnicodeDecodeError):
        return None
    return None


def _host(first: bytes) -> str:
    """The host a connection was for: its HTTP Host header, or the name in its TLS hello (SNI)."""
    if first[:1] == b"\x16":
        return _sni(first) or repr(first[:40])
    found = re.search(rb"\r\nHost: ([^\r]+)", first)
    return found.group(1).decode("ascii", "replace") if found else repr(first[:40])


@pytest.fixture
def outside(tmp_path: Path) -> Iterator[tuple[OutsideHosts, Path]]:
    hosts = OutsideHosts()
    wrapper = tmp_path / "chromium"
    rules = f"MAP * 127.0.0.1:{hosts.port}, EXCLUDE 127.0.0.1, EXCLUDE localhost"
    wrapper.write_text(f'#!/bin/sh\nexec /usr/bin/chromium "--host-resolver-rules={rules}" "$@"\n', encoding="utf-8")
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IEXEC)
    yield hosts, wrapper
    hosts.sock.close()


def run_short_tests(
    count: int, concurrency: int, tmp_path: Path, browser_tmp: Path, site: DemoSite, outside: tuple[OutsideHosts, Path]
) -> dict:
    hosts, chromium = outside
    with ScriptedLLM(QUICK) as llm:
        proc = start_cli(
            tmp_path,
            short_tests(count),
            site,
            llm,
            "--concurrency",
            str(concurrency),
            env=run_env(browser_tmp, PREVIEW_QA_CHROMIUM=str(chromium)),
        )
        try:
            _, stderr = proc.communicate(timeout=900)  # the process ends by itself: no hang after the last result
        finally:
            proc.kill()
    assert proc.returncode == 0, stderr[-3000:]
    assert "Traceback" not in stderr
    results = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    assert [t["status"] for t in results["tests"]] == ["passed"] * count, [t["reason"] for t in results["tests"]]
    assert left_behind(browser_tmp) == []
    assert sorted(p.name for p in browser_tmp.iterdir()) == []  # no profile, download folder or other file left either
    # Any host at all: browser-use's CDN, PyPI, Chromium's own sign-in, updater or time service.
    left = {_host(first) for first in hosts.seen}
    assert not left, sorted(left)
    return results


def test_soak_twenty_short_tests_four_at_a_time(
    tmp_path: Path, browser_tmp: Path, site: DemoSite, outside: tuple[OutsideHosts, Path]
) -> None:
    run_short_tests(20, 4, tmp_path, browser_tmp, site, outside)


def test_stress_eight_browsers_start_at_once_on_two_cores(
    tmp_path: Path, browser_tmp: Path, site: DemoSite, outside: tuple[OutsideHosts, Path]
) -> None:
    results = run_short_tests(8, 8, tmp_path, browser_tmp, site, outside)
    retried = [
        t["name"]
        for t in results["tests"]
        if "browser_start_failed" in (tmp_path / "out" / t["artifacts"]["events"]).read_text(encoding="utf-8")
    ]
    print(f"{len(retried)} of 8 browsers needed a second start: {retried}")


def test_the_listener_reads_the_host_a_tls_hello_names() -> None:
    """The SNI reader on a real ClientHello (Python's ssl), whose random bytes once read as part of the name."""
    bio_in, bio_out = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = ssl.create_default_context().wrap_bio(bio_in, bio_out, server_hostname="accounts.google.com")
    with contextlib.suppress(ssl.SSLWantReadError):
        tls.do_handshake()
    hello = bio_out.read()
    assert _complete(hello) and not _complete(hello[:-1])
    assert _host(hello) == "accounts.google.com"
    assert _host(b"GET / HTTP/1.1\r\nHost: cdn.browser-use.com\r\n\r\n") == "cdn.browser-use.com"
