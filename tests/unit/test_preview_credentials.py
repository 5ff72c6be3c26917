"""Preview credentials: what the preview's requests carry (the extra headers, basic auth's Authorization header), the
redactor naming the basic-auth password, and the preview wait never carrying them to another host on a redirect."""

from __future__ import annotations

import asyncio
import base64
from pathlib import Path

from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from preview_qa.config import RunConfig
from preview_qa.engine.preview import wait_for_preview
from preview_qa.secrets.redact import Redactor, describe

CONFIG = RunConfig(
    manifest=Path("qa.yml"),
    base_url="http://preview.test",
    extra_headers={"x-bypass": "token-123456"},
    http_credentials=("qa", "pa:ss-word-77"),
)


def test_the_preview_headers_are_the_extra_headers_and_basic_auth() -> None:
    token = base64.b64encode(b"qa:pa:ss-word-77").decode()
    assert CONFIG.preview_headers == {"x-bypass": "token-123456", "Authorization": f"Basic {token}"}
    assert RunConfig(manifest=Path("qa.yml"), base_url="http://p.test").preview_headers == {}


def test_the_basic_auth_password_is_a_named_secret_also_inside_its_header() -> None:
    redactor = Redactor.of_tests({}, None, CONFIG.extra_headers, CONFIG.basic_auth_password)
    header = CONFIG.preview_headers["Authorization"]
    assert describe(redactor.find(header) or "") == "the basic-auth password"
    assert "pa:ss-word-77" not in redactor.text(f"typed pa:ss-word-77, sent {header}")
    assert redactor.text(header).startswith("Basic ") and "<secret>basic-auth-password</secret>" in redactor.text(header)


def test_the_preview_wait_sends_the_credentials_to_the_preview_and_follows_no_redirect(httpserver: HTTPServer) -> None:
    seen: list[dict[str, str]] = []

    def preview(request: Request) -> Response:
        seen.append(dict(request.headers))
        return Response(status=302, headers={"Location": "http://elsewhere.invalid/login"})

    httpserver.expect_request("/").respond_with_handler(preview)
    assert asyncio.run(wait_for_preview(httpserver.url_for("/"), 5, CONFIG.preview_headers)) is None  # 3xx: it answered
    assert len(seen) == 1 and seen[0]["X-Bypass"] == "token-123456"
    assert seen[0]["Authorization"] == CONFIG.preview_headers["Authorization"]
