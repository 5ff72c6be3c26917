"""stderr as safe as stdout: lines redacted and unable to issue workflow commands; stderr joined to stdout only when
both are the process's own."""

from __future__ import annotations

import io
import subprocess
import sys
import textwrap

import pytest

from preview_qa.secrets.redact import Redactor
from preview_qa.secrets.safe_stderr import SafeStderr, inert, join_stderr_to_stdout
from tests.fakes.github import read_log

HOSTILE = [
    "::error::pwned",
    "   ::add-mask::x",
    "\t::warning file=a::b",
    "\x1c::error::behind a control",
    "text ##[error]legacy",
    "##[set-output name=a;]b",
]


@pytest.mark.parametrize("line", HOSTILE)
def test_a_line_that_would_be_a_command_is_only_displayed(line: str) -> None:
    assert read_log(line).commands, "the fake runner must read it as a command, or the test proves nothing"
    safe = inert(line)
    assert read_log(safe).commands == [] and safe.replace("\u200b", "") == line


def test_ordinary_lines_are_left_as_they_are() -> None:
    for line in ["INFO step 1: click", "a :: b", "url http://x/#a", "## heading", ""]:
        assert inert(line) == line


def test_safe_stderr_redacts_and_defuses_whole_lines() -> None:
    inner = io.StringIO()
    stream = SafeStderr(inner, Redactor({"pw": "hunter2 secret"}))
    stream.write("partial ::error::")  # nothing goes out before the line is whole
    assert inner.getvalue() == ""
    stream.write("x hunter2+secret\n::error::pwned\n")
    stream.write("multi-line hunter2\nsecret\n")  # one write's lines are redacted together
    assert inner.getvalue() == ("partial ::error::x <secret>pw</secret>\n\u200b::error::pwned\nmulti-line <secret>pw</secret>\n")
    stream.write("::error::unfinished")
    stream.close_line()
    assert inner.getvalue().endswith("\n\u200b::error::unfinished\n")


def test_stderr_is_not_joined_when_it_is_not_the_process_own() -> None:
    assert join_stderr_to_stdout() is None  # under pytest both streams are captured


def test_stderr_is_joined_to_stdout_and_restored() -> None:
    """A child writing to file descriptor 2 (as the Playwright driver does) lands on stdout while joined."""
    code = textwrap.dedent("""
        import os, sys
        from preview_qa.secrets.safe_stderr import join_stderr_to_stdout
        restore = join_stderr_to_stdout()
        os.write(2, b"joined\\n")
        restore()
        os.write(2, b"apart\\n")
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "joined\n" and done.stderr == "apart\n"


def test_browser_uses_libraries_stay_quiet_when_imported_after_the_run_quieted_them() -> None:
    """bubus sets its logger's level as it is imported, once the run's first agent test loads browser-use: an error it
    logs then (a handler failing after a browser crash) must not reach stderr through logging's last resort."""
    script = textwrap.dedent(
        """
        import logging
        from preview_qa.app import _quiet_logs
        _quiet_logs(False)
        import preview_qa.agent.adapter.connect  # browser-use, and bubus with it
        logging.getLogger("bubus").error("EventBus handler failed")
        logging.getLogger("browser_use.browser.session").error("session lost")
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
