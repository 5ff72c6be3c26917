"""End to end, many browsers: a run of short tests and a run that starts many browsers at once on 2 cores both end
with the process exited, every test passed, no process of any browser nor any file left in TMPDIR, and no request
sent to a host outside the test's (bench/soak.py is the long version). Chromium runs through a wrapper that maps
every host but the fixture site's to a listener (tests/e2e/outside_hosts.py): a connection there is a request our
tooling made on its own (browser-use's loading page fetches its logo from its CDN, for one)."""

from __future__ import annotations

import contextlib
import json
import ssl
from collections.abc import Iterator
from pathlib import Path

import pytest

from preview_qa.demo.scripted_llm import ScriptedLLM
from tests.e2e.outside_hosts import OutsideHosts, complete, host_of
from tests.e2e.processes import QUICK, left_behind, run_env, short_tests, start_cli
from tests.site import DemoSite

pytestmark = pytest.mark.e2e


@pytest.fixture
def outside(tmp_path: Path) -> Iterator[tuple[OutsideHosts, Path]]:
    hosts = OutsideHosts()
    yield hosts, hosts.chromium(tmp_path)
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
    left = {host_of(first) for first in hosts.seen}
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
    assert complete(hello) and not complete(hello[:-1])
    assert host_of(hello) == "accounts.google.com"
    assert host_of(b"GET / HTTP/1.1\r\nHost: cdn.browser-use.com\r\n\r\n") == "cdn.browser-use.com"
