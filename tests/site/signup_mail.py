"""A sign-up app that mails its verification link by real SMTP (to MailDev, in the e2e tests): /signup takes an
address and sends "Verify your email" with a one-use link; /verify?token= reads "Email verified" once, then "This
link is not valid". Its mail carries a script (that would retitle the page) and a tracking pixel (`pixels` counts
its requests): an opened mail runs neither. Served on its own port, apart from DemoSite: its mail goes to the SMTP
port it is given."""

from __future__ import annotations

import html
import secrets
import smtplib
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from email.message import EmailMessage
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

SUBJECT = "Verify your email"
FORM = (
    "<h1>Sign up</h1><form method=post action=/signup><label for=email>Email</label>"
    "<input id=email name=email type=email required><button>Sign up</button></form>"
)


def _page(title: str, body: str) -> bytes:
    return (
        f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{title}</title></head><body>{body}</body></html>".encode()
    )


class SignupApp:
    """The app on 127.0.0.1:<port>, mailing through 127.0.0.1:`smtp_port`; `sent` holds each address it mailed."""

    def __init__(self, smtp_port: int):
        self.smtp_port = smtp_port
        self.tokens: set[str] = set()  # issued and not yet used
        self.sent: list[str] = []
        self.pixels = 0  # requests of the mail's tracking pixel
        self._lock = threading.Lock()
        app = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                pass

            def _send(self, body: bytes, status: int = 200) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                url = urlsplit(self.path)
                if url.path == "/signup":
                    self._send(_page("Sign up", FORM))
                elif url.path == "/pixel.gif":
                    app.pixels += 1
                    self._send(b"", 204)
                elif url.path == "/verify":
                    token = parse_qs(url.query).get("token", [""])[0]
                    self._send(_page("Verify", f"<h1>{app.verify(token)}</h1>"))
                else:
                    self._send(_page("Not found", "<h1>Not found</h1>"), 404)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                email = parse_qs(self.rfile.read(length).decode()).get("email", [""])[0]
                app.mail(email)
                self._send(_page("Check your inbox", f"<h1>Check your inbox</h1><p>We sent a link to {html.escape(email)}.</p>"))

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def mail(self, address: str) -> None:
        token = secrets.token_urlsafe(16)
        with self._lock:
            self.tokens.add(token)
            self.sent.append(address)
        link = f"{self.url}/verify?token={token}"
        message = EmailMessage()
        message["Subject"], message["From"], message["To"] = SUBJECT, "Acme Shop <no-reply@acme.test>", address
        message.set_content(f"Welcome to Acme! Verify your email: {link}")
        script = "<script>document.title = 'SCRIPT RAN'</script>"
        pixel = f"<img src='{self.url}/pixel.gif' alt=''>"
        body = f"<h1>Welcome to Acme</h1><p><a href='{link}'>Verify</a> your email.</p>{pixel}{script}"
        message.add_alternative(body, subtype="html")
        with smtplib.SMTP("127.0.0.1", self.smtp_port, timeout=10) as smtp:
            smtp.send_message(message)

    def verify(self, token: str) -> str:
        with self._lock:
            if token in self.tokens:
                self.tokens.discard(token)
                return "Email verified"
        return "This link is not valid"


@contextmanager
def signup_app(smtp_port: int) -> Iterator[SignupApp]:
    app = SignupApp(smtp_port)
    thread = threading.Thread(target=app.server.serve_forever, daemon=True)
    thread.start()
    try:
        yield app
    finally:
        app.server.shutdown()
        app.server.server_close()
