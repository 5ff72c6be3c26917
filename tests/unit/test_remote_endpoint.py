"""--cdp-url's endpoint: a browser in a container names its WebSocket by its own loopback address, reached here at the
host it was asked at; messages name the endpoint without a grid's token."""

from __future__ import annotations

from pathlib import Path

import pytest

from preview_qa.agent.browsers.remote import shown, stopped_answering, websocket_of
from tests.builders import cli_run

WS = "ws://127.0.0.1:9222/devtools/browser/0b5a3c1e-8a4f-4f57-9b1e-2a3c4d5e6f70"


@pytest.mark.parametrize(
    ("given", "websocket"),
    [
        ("http://chromium-1:9222", "ws://chromium-1:9222/devtools/browser/0b5a3c1e-8a4f-4f57-9b1e-2a3c4d5e6f70"),
        ("https://grid.example:443", "wss://grid.example:443/devtools/browser/0b5a3c1e-8a4f-4f57-9b1e-2a3c4d5e6f70"),
        ("http://127.0.0.1:9222", WS),
    ],
)
def test_a_loopback_websocket_is_reached_at_the_host_asked(given: str, websocket: str) -> None:
    assert websocket_of(given, WS) == websocket
    assert websocket_of(given, "ws://10.0.0.7:9222/devtools/browser/x") == "ws://10.0.0.7:9222/devtools/browser/x"


def test_the_endpoint_is_named_without_its_token() -> None:
    assert shown("wss://user:pw@grid.example:3000/chromium?token=s3cr3t") == "wss://grid.example:3000"
    assert stopped_answering("http://10.0.0.7:9222/") == "the remote browser at http://10.0.0.7:9222 stopped answering"


def test_the_flag_the_actions_input_and_the_variable_reach_the_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert cli_run(tmp_path, monkeypatch, "--cdp-url", "http://10.0.0.7:9222")[1].cdp_url == "http://10.0.0.7:9222"
    assert cli_run(tmp_path, monkeypatch, env={"INPUT_CDP-URL": "ws://grid:3000"})[1].cdp_url == "ws://grid:3000"
    assert cli_run(tmp_path, monkeypatch, env={"PREVIEW_QA_CDP_URL": "http://c:9222"})[1].cdp_url == "http://c:9222"
    assert cli_run(tmp_path, monkeypatch, env={"INPUT_CDP-URL": ""})[1].cdp_url is None  # the action's empty input


def test_an_endpoint_that_is_no_url_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    outcome, config = cli_run(tmp_path, monkeypatch, "--cdp-url", "chromium:9222")
    assert outcome.exit_code == 2 and "'chromium:9222' is no DevTools endpoint" in outcome.output and config is None
