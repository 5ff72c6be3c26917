"""A ThreadingHTTPServer on a daemon thread, started and stopped as a context manager: the demo shop's and the
scripted LLM's."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


class OwnedHTTPServer(ThreadingHTTPServer):
    """A ThreadingHTTPServer (daemon threads) that knows the BackgroundServer it belongs to."""

    daemon_threads = True
    owner: Any


class BackgroundServer:
    """A ThreadingHTTPServer on a daemon thread; its handlers reach this object as `self.server.owner`."""

    handler: type[BaseHTTPRequestHandler]
    url_suffix = ""

    def __init__(self, port: int = 0, host: str = "127.0.0.1") -> None:
        self.port, self.host = port, host
        self._lock = threading.Lock()
        self._stop = threading.Event()  # set while stopping: long-running handlers must give up
        self._server: OwnedHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError(f"{type(self).__name__} is not started")
        return f"http://{self.host}:{self._server.server_address[1]}{self.url_suffix}"

    def start(self) -> str:
        if self._server is None:
            self._stop.clear()
            self._server = OwnedHTTPServer((self.host, self.port), self.handler)
            self._server.owner = self
            self._thread = threading.Thread(
                target=self._server.serve_forever, args=(0.05,), name=type(self).__name__, daemon=True
            )
            self._thread.start()
        return self.url

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        self._stop.set()
        server.shutdown()
        server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
