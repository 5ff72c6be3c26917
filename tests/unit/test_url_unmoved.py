"""An `expect.url` that cannot fail fails (verdict/checks/url.py): Django's failed admin login stays on /admin/login/,
which contains the /admin/ of a successful one, and a wrong password passed."""

from __future__ import annotations

from preview_qa.results import ExpectationOutcome
from preview_qa.verdict.checks.url import unmoved

LOGIN = "http://127.0.0.1:8765/admin/login/"


def _url_ok(found: str) -> list[ExpectationOutcome]:
    return [
        ExpectationOutcome(check="url", expected="URL containing '/admin/'", found=found, ok=True, timeout_s=5, waited_s=0.1),
        ExpectationOutcome(check="text", expected="visible text 'Log in'", found="'Log in'", ok=True),
    ]


def test_a_url_check_that_held_on_the_unchanged_start_page_fails_and_says_why() -> None:
    url, text = unmoved(_url_ok(LOGIN), "/admin/", LOGIN, LOGIN + "#main")
    assert not url.ok and "already contained '/admin/' before anything was done" in url.found, url.found
    assert text.ok  # only the url check is one that could not fail
    assert url.timeout_s is None  # it held at once: its reason says no "after waiting 5 s"


def test_a_url_check_passes_once_the_page_left_where_it_began() -> None:
    outcomes = _url_ok("http://127.0.0.1:8765/admin/")
    assert unmoved(outcomes, "/admin/", LOGIN, "http://127.0.0.1:8765/admin/") == outcomes


def test_a_start_page_without_the_expected_url_is_no_concern() -> None:
    outcomes = _url_ok("http://127.0.0.1:8765/login")
    assert unmoved(outcomes, "/dashboard", "http://127.0.0.1:8765/login", "http://127.0.0.1:8765/login") == outcomes
    assert unmoved(outcomes, None, LOGIN, LOGIN) == outcomes


def test_a_url_naming_the_page_the_test_stays_on_is_left_alone() -> None:
    search = "http://127.0.0.1:8765/search/?code=1"
    for expected in ("/search", "/search/", "/search/?code=1", search):
        outcomes = _url_ok(search)
        assert unmoved(outcomes, expected, search, search) == outcomes, expected
