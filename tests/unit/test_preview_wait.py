"""The wait for the preview (on by default: --wait-timeout 120): an app's own answer ends it, whatever it says (a 404
at `/` is an app without a home page, whose tests find what it means); what a deployment still starting answers (a
gateway's 5xx, a rate limit) is waited through, and named when the wait runs out."""

from __future__ import annotations

import asyncio

import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from preview_qa.engine.preview import wait_for_preview


@pytest.mark.parametrize("status", [200, 302, 404, 410])
def test_an_app_s_own_answer_ends_the_wait(httpserver: HTTPServer, status: int) -> None:
    httpserver.expect_request("/").respond_with_data("", status=status)
    assert asyncio.run(wait_for_preview(httpserver.url_for("/"), 5, interval=0.05)) is None


def test_a_deployment_still_starting_is_waited_for_until_its_app_answers(httpserver: HTTPServer) -> None:
    answers = [502, 503, 429, 200]

    def deploying(_request: Request) -> Response:
        return Response(status=answers.pop(0))

    httpserver.expect_request("/").respond_with_handler(deploying)
    assert asyncio.run(wait_for_preview(httpserver.url_for("/"), 30, interval=0.05)) is None
    assert answers == []


def test_a_preview_that_never_answers_but_a_gateway_error_is_named_when_the_wait_runs_out(httpserver: HTTPServer) -> None:
    httpserver.expect_request("/").respond_with_data("", status=503)
    url = httpserver.url_for("/")
    assert asyncio.run(wait_for_preview(url, 0.2, interval=0.05)) == f"HTTP 503 from {url}"
