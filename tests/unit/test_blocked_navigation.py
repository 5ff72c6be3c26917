"""A navigation browser-use refused, in words: a host outside the test's allowed ones says so with the fix; what was
no URL at all (a small model's placeholder 'url_value') says that, never a blank host and the allowlist's fix."""

from __future__ import annotations

from preview_qa.agent.evidence.evidence import blocked_navigation
from preview_qa.verdict.agent_run import AgentRun
from preview_qa.verdict.checks.requests import blocked_navigation_lines


def test_a_host_outside_the_allowed_ones_is_named_with_its_fix() -> None:
    run = AgentRun(navigations_blocked=[blocked_navigation("https://evil.example/x?token=1", "'Pay now'")])
    assert blocked_navigation_lines(run) == [
        "a navigation to evil.example after 'Pay now' was blocked: evil.example is not one of the test's allowed hosts "
        "(add it to `allowed_domains` if the test should go there)"
    ]


def test_what_is_no_url_is_said_so_and_not_the_allowlist() -> None:
    run = AgentRun(navigations_blocked=[blocked_navigation("url_value", None), blocked_navigation("url_value", None)])
    assert blocked_navigation_lines(run) == ["the agent asked to open 'url_value', which is not a URL: nothing was loaded"]
    assert blocked_navigation("file:///etc/passwd", None).host == "file:"  # a scheme: a URL, refused as any
