"""The demo's mail catcher, in-process: an SMTP server (aiosmtpd) the demo shop mails its sign-up's verification link
to, and the part of MailDev 3's REST API that the manifest's `inbox: {maildev: URL}` reads (GET /api/email), so that
`preview-qa demo` needs no MailDev."""

from __future__ import annotations

import email
import email.policy
import json
import secrets
import socket
from datetime import UTC, datetime
from email.message import EmailMessage
from email.utils import getaddresses
from http.server import BaseHTTPRequestHandler
from typing import Any, cast
from urllib.parse import parse_qs, urlsplit

from preview_qa.demo.server import BackgroundServer, OwnedHTTPServer


def _addresses(header: str | None) -> list[dict[str, str]]:
    return [{"address": address, "name": name} for name, address in getaddresses([header or ""]) if address]


def _part(message: EmailMessage, kind: str) -> str:
    body = message.get_body(preferencelist=(kind,))
    return str(body.get_content()) if body is not None else ""


class _Handler(BaseHTTPRequestHandler):
    server: OwnedHTTPServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        inbox = cast("DemoInbox", self.server.owner)
        to = parse_qs(url.query).get("to.address", [""])[0].lower()
        with inbox._lock:
            mails = [m for m in inbox.mails if not to or to in (a["address"].lower() for a in m["to"])]
        found = url.path == "/api/email"
        body = json.dumps(mails if found else {"error": "Not found"}).encode()
        self.send_response(200 if found else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class _Smtp:
    """aiosmtpd's handler: each mail it is given is kept as MailDev keeps it."""

    def __init__(self, inbox: DemoInbox):
        self.inbox = inbox

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        message = email.message_from_bytes(envelope.content, policy=email.policy.default)
        kept = {
            "id": secrets.token_hex(4),
            "time": datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "subject": str(message.get("Subject", "")),
            "from": _addresses(message.get("From")),
            "to": _addresses(message.get("To")) or [{"address": a, "name": ""} for a in envelope.rcpt_tos],
            "html": _part(message, "html"),
            "text": _part(message, "plain"),
        }
        with self.inbox._lock:
            self.inbox.mails.append(kept)
        return "250 Message accepted for delivery"


class DemoInbox(BackgroundServer):
    """SMTP on 127.0.0.1:`smtp_port` and MailDev's GET /api/email at `url`; `mails` in MailDev 3's shape."""

    handler = _Handler

    def __init__(self, port: int = 0) -> None:
        super().__init__(port)
        self.mails: list[dict[str, Any]] = []
        self.smtp_port = 0
        self._smtp: Any = None

    def start(self) -> str:
        from aiosmtpd.controller import Controller  # only the demo pays its import

        url = super().start()
        if self._smtp is None:
            with socket.socket() as s:  # aiosmtpd checks its server by connecting to the port it was given
                s.bind(("127.0.0.1", 0))
                self.smtp_port = int(s.getsockname()[1])
            self._smtp = Controller(_Smtp(self), hostname="127.0.0.1", port=self.smtp_port)
            self._smtp.start()
        return url

    def stop(self) -> None:
        smtp, self._smtp = self._smtp, None
        if smtp is not None:
            smtp.stop()
        super().stop()
