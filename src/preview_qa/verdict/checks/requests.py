"""Pure: what the app's own requests tell the verdict: the server errors that fail a test, the navigations kept off
the site."""

from __future__ import annotations

from fnmatch import fnmatchcase

from preview_qa.manifest.models import TestSpec
from preview_qa.verdict.agent_run import AgentRun, BlockedNavigation, ServerError


def server_error_lines(spec: TestSpec, agent_run: AgentRun) -> list[str]:
    """Each request the server failed after an action, once per method and path: unless it succeeded later (the app
    retried) or the test allows its path. "POST /api/save answered 500 after 'Save'"."""
    counted: dict[tuple[str, str], list[ServerError]] = {}
    for error in agent_run.server_errors:
        if not error.succeeded_later and not allowed(spec, error.path):
            counted.setdefault((error.method, error.path), []).append(error)
    return [_line(errors) for errors in counted.values()]


def allowed(spec: TestSpec, path: str) -> bool:
    """The path matches one of the test's `allow_server_errors` globs ('*' spans '/', as in /api/metrics*)."""
    return any(fnmatchcase(path, glob) for glob in spec.allow_server_errors)


def _line(errors: list[ServerError]) -> str:
    first = errors[0]
    again = f" ({len(errors)} times)" if len(errors) > 1 else ""
    return f"{first.method} {first.path} answered {first.status}{again} after {first.after}"


def blocked_navigation_lines(agent_run: AgentRun) -> list[str]:
    """Each host a navigation was kept from, once, with the action that led there: why the page went blank."""
    seen: dict[str, BlockedNavigation] = {}
    for blocked in agent_run.navigations_blocked:
        seen.setdefault(blocked.host if blocked.not_a_url is None else f"?{blocked.not_a_url}", blocked)
    return [
        f"the agent asked to open {b.not_a_url!r}{f' after {b.after}' if b.after else ''}, which is not a URL: nothing was loaded"
        if b.not_a_url is not None
        else f"a navigation to {b.host}{f' after {b.after}' if b.after else ''} was blocked: {b.host} is not one of the "
        f"test's allowed hosts (add it to `allowed_domains` if the test should go there)"
        for b in seen.values()
    ]
