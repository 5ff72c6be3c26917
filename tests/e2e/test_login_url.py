"""A sign-in whose failure stays on a page whose URL contains the success page's: Django's admin at /admin/login/ and
/admin/. A login written as steps, its click expecting `url: /admin/`, passed with a wrong password (the real admin
showed it: `expect.url` is "the URL contains"). Now the check that could not fail fails, and says why; the right
password still passes. The app here plays the admin's login on 127.0.0.1: a form posted to its own URL, a redirect
to /admin/ when the password is right, the form again with an error when it is not."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs

import pytest

from tests.conftest import CliRun, preview_qa_run

pytestmark = pytest.mark.e2e

PASSWORD = "right-horse-battery"
FORM = """<!doctype html><title>Log in | Django site admin</title><main><h1>Django administration</h1>{error}
<form method=post action=/admin/login/><label>Username <input name=username></label>
<label>Password <input name=password type=password></label><button>Log in</button></form></main>"""
ERROR = "<p>Please enter the correct username and password for a staff account.</p>"
HOME = "<!doctype html><title>Site administration</title><main><h1>Site administration</h1></main>"


class Admin(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self._page(HOME if self.path == "/admin/" else FORM.format(error=""))

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
        if parse_qs(body).get("password") == [PASSWORD]:
            self.send_response(302)
            self.send_header("Location", "/admin/")
            self.send_header("Content-Length", "0")
            self.end_headers()
        else:
            self._page(FORM.format(error=ERROR))

    def _page(self, html: str) -> None:
        data = html.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def admin() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Admin)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def _login(folder: Path, admin: str, password: str) -> CliRun:
    manifest = folder / "qa.yml"
    manifest.write_text(
        f"""version: 1
tests:
  - name: Admin login
    start: /admin/login/
    steps:
      - fill: {{label: Username, value: admin}}
      - fill: {{label: Password, value: {password}}}
      - click: {{role: button, name: Log in}}
        expect: {{url: /admin/}}
""",
        encoding="utf-8",
    )
    return preview_qa_run(manifest, admin, folder / "out", None, "--api-key", "unused")  # no step asks an LLM


def test_a_wrong_password_fails_the_login_whose_url_check_held_on_the_login_page(admin: str, tmp_path: Path) -> None:
    run = _login(tmp_path, admin, "wrong-password")
    t = run.test("Admin login")
    assert run.exit_code == 1 and t["status"] == "failed", run.stdout + run.stderr
    assert "already contained '/admin/' before anything was done" in t["reason"], t["reason"]


def test_the_right_password_passes(admin: str, tmp_path: Path) -> None:
    run = _login(tmp_path, admin, PASSWORD)
    assert run.exit_code == 0 and run.test("Admin login")["status"] == "passed", run.stdout + run.stderr
