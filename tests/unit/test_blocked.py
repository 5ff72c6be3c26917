"""A test the preview kept the agent from carrying out is errored with what to do, never passed, and failed only when
a check failed or a secret was carried off; the preview wait says once that the preview looks protected."""

from __future__ import annotations

import asyncio
import json
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from threading import Thread
from typing import Any

import pytest

from preview_qa.config import RunConfig
from preview_qa.engine.agent_port import AgentRequest
from preview_qa.engine.runner import Runner
from preview_qa.events import Event, RunWarning
from preview_qa.manifest.models import Manifest
from preview_qa.results import ExpectationOutcome, Status
from preview_qa.secrets.redact import Redactor
from preview_qa.verdict.agent_run import AgentReport, AgentRun, BlockedBy, DoneReport, SecretAttempt
from preview_qa.verdict.decide import decide, parse_report
from tests.builders import PASS, spec


def blocked(by: str | None = "host_protection", **extra: Any) -> DoneReport:
    return DoneReport(
        text=json.dumps({"status": "blocked", "reason": "a Vercel login page", "blocked_by": by, **extra}), success=False
    )


@pytest.mark.parametrize("by", [*BlockedBy, None])
def test_a_blocked_test_is_errored_with_the_remedy(by: BlockedBy | None) -> None:
    verdict = decide(
        spec(), AgentRun(done=blocked(by and by.value), access_denied=["the server answered HTTP 401 to https://x/"])
    ).verdict
    assert verdict.status is Status.ERRORED
    assert verdict.reason.startswith("blocked: ")
    assert verdict.causes == ["agent: a Vercel login page", "the server answered HTTP 401 to https://x/"]


def test_host_protection_names_the_input_that_unlocks_it() -> None:
    verdict = decide(spec(), AgentRun(done=blocked())).verdict
    assert verdict.reason == (
        "blocked: the preview answered with its host's login page: give the protection-bypass "
        "header with `extra-headers` (or `http-credentials` for basic auth)"
    )


def test_a_failed_check_keeps_a_blocked_test_failed_with_the_block_among_the_causes() -> None:
    failed = ExpectationOutcome(check="url", expected="URL containing '/menu'", found="https://x/login", ok=False)
    verdict = decide(spec(expect={"url": "/menu"}), AgentRun(done=blocked(), expectations=[failed])).verdict
    assert verdict.status is Status.FAILED
    assert verdict.reason.startswith("expectation url failed")
    assert verdict.causes[0].startswith("blocked: the preview answered with its host's login page")


def test_a_secret_carried_off_keeps_a_blocked_test_failed() -> None:
    verdict = decide(spec(), AgentRun(done=blocked(), secret_attempts=[SecretAttempt("pw", "evil.test")])).verdict
    assert verdict.status is Status.FAILED
    assert verdict.causes[0].startswith("blocked: ")


def test_blocked_even_with_every_check_holding_never_passes() -> None:
    held = ExpectationOutcome(check="url", expected="URL containing '/'", found="https://x/", ok=True)
    assert decide(spec(expect={"url": "/"}), AgentRun(done=blocked(), expectations=[held])).verdict.status is Status.ERRORED


def test_a_pass_that_names_a_blocker_is_refused() -> None:
    report, why = parse_report(spec(), json.dumps({"status": "pass", "reason": "ok", "blocked_by": "captcha"}))
    assert report is None and why is not None and "blocked_by is set but status is 'pass'" in why
    assert (
        decide(
            spec(), AgentRun(done=DoneReport(json.dumps({"status": "pass", "reason": "ok", "blocked_by": "captcha"}), True))
        ).verdict.status
        is Status.FAILED
    )


def test_an_unknown_blocker_is_refused() -> None:
    assert parse_report(spec(), json.dumps({"status": "blocked", "reason": "x", "blocked_by": "weather"}))[0] is None


def test_the_report_schema_offers_blocked_and_its_enum() -> None:
    schema = AgentReport.model_json_schema()
    assert "blocked" in schema["properties"]["status"]["enum"]
    assert set(schema["$defs"]["BlockedBy"]["enum"]) == {b.value for b in BlockedBy}


class _Protected(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(401)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


def test_the_preview_wait_says_once_that_a_401_preview_looks_protected() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Protected)
    Thread(target=server.serve_forever, daemon=True).start()
    try:

        async def agent(request: AgentRequest) -> AgentRun:
            return AgentRun(done=PASS)

        events: list[Event] = []
        config = RunConfig(
            manifest=Path("qa.yml"), base_url=f"http://127.0.0.1:{server.server_port}", chromium="/bin/true", wait_timeout=5
        )
        result = asyncio.run(
            Runner(Manifest(version=1, tests=[spec("a"), spec("b")]), config, {}, agent, events.append, Redactor({})).run()
        )
    finally:
        server.shutdown()
    warnings = [e.message for e in events if isinstance(e, RunWarning)]
    assert len(warnings) == 1 and warnings == result.warnings
    assert warnings[0].startswith("the preview answered HTTP 401: it looks protected") and "`extra-headers`" in warnings[0]
