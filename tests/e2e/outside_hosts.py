"""A stand-in for every host outside the fixture site's, for the e2e tests that prove no request leaves: a TCP listener
that keeps what each connection sent first, and a Chromium wrapper that maps every other host to it."""

from __future__ import annotations

import contextlib
import re
import socket
import stat
import threading
from pathlib import Path


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
                        if complete(first):
                            break
                self.seen.append(first)

    def chromium(self, folder: Path, log: Path | None = None) -> Path:
        """An executable for PREVIEW_QA_CHROMIUM: /usr/bin/chromium with every host but 127.0.0.1 and localhost mapped
        to this listener; with `log`, each launch's arguments are written there first (a file per launch)."""
        wrapper = folder / "chromium"
        rules = f"MAP * 127.0.0.1:{self.port}, EXCLUDE 127.0.0.1, EXCLUDE localhost"
        record = f'printf "%s\\n" "$@" > {log}/launch-$$\n' if log is not None else ""
        wrapper.write_text(f'#!/bin/sh\n{record}exec /usr/bin/chromium "--host-resolver-rules={rules}" "$@"\n', encoding="utf-8")
        wrapper.chmod(wrapper.stat().st_mode | stat.S_IEXEC)
        return wrapper


def complete(first: bytes) -> bool:
    """Whether a connection's first bytes hold a whole HTTP request head or a whole TLS record."""
    if first[:1] == b"\x16":
        return len(first) >= 5 and len(first) >= 5 + int.from_bytes(first[3:5], "big")
    return b"\r\n\r\n" in first


def sni(hello: bytes) -> str | None:
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


def host_of(first: bytes) -> str:
    """The host a connection was for: its HTTP Host header, or the name in its TLS hello (SNI)."""
    if first[:1] == b"\x16":
        return sni(first) or repr(first[:40])
    found = re.search(rb"\r\nHost: ([^\r]+)", first)
    return found.group(1).decode("ascii", "replace") if found else repr(first[:40])
