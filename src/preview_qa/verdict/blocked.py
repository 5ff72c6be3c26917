"""A test the preview kept the agent from carrying out: what blocked it, and what the user can do about it."""

from __future__ import annotations

from preview_qa.verdict.agent_run import BlockedBy

# Each says what the agent met and which input unlocks it: a team with a missing bypass token reads one fix, not a
# different failure per test.
REMEDIES: dict[BlockedBy | None, str] = {
    BlockedBy.HOST_PROTECTION: "the preview answered with its host's login page: give the protection-bypass header "
    "with `extra-headers` (or `http-credentials` for basic auth)",
    BlockedBy.CAPTCHA: "the preview showed a captcha: turn it off for preview deployments, or let the protection-bypass "
    "header (`extra-headers`) skip it",
    BlockedBy.BOT_CHECK: "the preview showed a bot check: allow the runner through, e.g. with a bypass header in `extra-headers`",
    BlockedBy.UNEXPECTED_SIGN_IN: "the app asked to sign in although the test gives no way to: declare the login in "
    "the test (its `secrets:`), or start it from a saved login (`use_state`)",
    None: "the preview kept the agent from carrying out the test, without saying what blocked it: look at the final screenshot",
}


def blocked_line(blocked_by: BlockedBy | None) -> str:
    """The reason of a blocked test: blocked, by what, and the fix."""
    return f"blocked: {REMEDIES[blocked_by]}"


def protected_preview_line(status: int) -> str:
    """Said once, before any test runs, when the preview's own answer is 401/403."""
    return (
        f"the preview answered HTTP {status}: it looks protected; give its protection-bypass header with "
        "`extra-headers`, or `http-credentials` for basic auth, or every test will be blocked"
    )
