"""save_state / use_state end to end: one login, three tests that start signed in (cookie and localStorage) after it at
--concurrency 2, replayed from the cache with this run's fresh login, --only on a dependent, a failing login that
errors its dependent without a browser or an LLM call, and the session cookie nowhere in the output."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from preview_qa.demo.scripted_llm import ScriptedLLM
from tests.conftest import CliRun, clean_env, preview_qa_run
from tests.site import DemoSite

pytestmark = pytest.mark.e2e

SIGNED_IN = "Signed in as demo@acme.test"


def dependent(name: str, path: str) -> str:
    return f"""
  - name: {name}
    start: {path}
    task: "[{name.lower()}] Check that the {name} page shows who is signed in."
    expect: {{text: ["{SIGNED_IN}", "{name} of your account"]}}"""


# The dependents come first: only the waiting makes them run after the login.
MANIFEST = f"""
version: 1
defaults: {{max_steps: 4, timeout: 120, use_state: signed in}}
tests:{dependent("Orders", "/app/orders")}{dependent("Settings", "/app/settings")}{dependent("Billing", "/app/billing")}
  - name: Log in
    start: /app/login
    task: "[login] Sign in as demo@acme.test with password <secret>pw</secret>."
    secrets: {{pw: DEMO_PASSWORD}}
    save_state: signed in
    use_state: null
    expect: {{url: /app/account, text: ["{SIGNED_IN}"]}}
"""
LOGIN = [
    {
        "actions": [
            {"input": {"element": "Email", "text": "demo@acme.test"}},
            {"input": {"element": "Password", "text": "<secret>pw</secret>"}},
            {"click": {"element": "Sign in"}},
        ]
    },
    {"done": {"status": "pass", "reason": "The account page greets demo@acme.test."}},
]
SCENARIOS = [
    {"name": "login", "match": "[login]", "turns": LOGIN},
    *(
        {"name": n, "match": f"[{n}]", "turns": [{"done": {"status": "pass", "reason": "It shows the user."}}]}
        for n in ("orders", "settings", "billing")
    ),
]
DEPENDENTS = ("Orders", "Settings", "Billing")

FAILING = """
version: 1
defaults: {max_steps: 4, timeout: 120}
tests:
  - name: Log in
    start: /app/login
    task: "[bad-login] Sign in."
    save_state: signed in
  - name: Orders
    start: /app/orders
    use_state: signed in
    task: "[orders] Check that the Orders page shows who is signed in."
"""


@dataclass
class Runs:
    first: CliRun
    replay: CliRun
    only: CliRun
    failing: CliRun
    cache: Path
    tokens: dict[str, list[str]]  # the session cookie values the site handed out during each run
    visits: dict[str, list[tuple[str, bool]]]  # the /app pages each run's browsers requested, and if signed in
    requests: dict[str, list[tuple[str, str]]]  # every request to the site during each run
    calls: dict[str, list[dict[str, Any]]]  # the scripted LLM's calls during each run


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, site: DemoSite) -> Iterator[Runs]:
    folder = tmp_path_factory.mktemp("state")
    (folder / "qa.yml").write_text(textwrap.dedent(MANIFEST), encoding="utf-8")
    (folder / "failing.yml").write_text(textwrap.dedent(FAILING), encoding="utf-8")
    cache, tmp = folder / "cache", folder / "tmp"
    tmp.mkdir()
    env = clean_env(TMPDIR=str(tmp))  # the state store's folder is made here, so the test can see it is gone
    del env["PREVIEW_QA_NO_CACHE"]
    tokens: dict[str, list[str]] = {}
    visits: dict[str, list[tuple[str, bool]]] = {}
    requests: dict[str, list[tuple[str, str]]] = {}
    calls: dict[str, list[dict[str, Any]]] = {}
    bad_login = {
        "name": "bad-login",
        "match": "[bad-login]",
        "turns": [{"done": {"status": "fail", "reason": "The password is refused."}}],
    }
    with ScriptedLLM([*SCENARIOS, bad_login]) as llm:

        def cli(out: str, manifest: str, *extra: str) -> CliRun:
            marks = len(site.app_tokens), len(site.app_visits), len(site.request_log), len(llm.calls)
            run = preview_qa_run(
                folder / manifest, site.url, folder / out, llm, "--cache", str(cache), "--concurrency", "2", *extra, env=env
            )
            tokens[out], visits[out] = site.app_tokens[marks[0] :], site.app_visits[marks[1] :]
            requests[out], calls[out] = site.request_log[marks[2] :], llm.calls[marks[3] :]
            return run

        first = cli("first", "qa.yml")
        site.end_sessions()  # the first run's login no longer works: a replay must log in again to pass
        replay = cli("replay", "qa.yml")
        only = cli("only", "qa.yml", "--only", "Orders", "--no-cache")
        failing = cli("failing", "failing.yml", "--no-cache")
    assert not list(tmp.glob("preview-qa-state-*")), "a saved state outlived its run"
    yield Runs(first, replay, only, failing, cache, tokens, visits, requests, calls)


def statuses(run: CliRun) -> dict[str, tuple[str, str]]:
    return {t["name"]: (t["status"], t["path"]) for t in run.results["tests"]}


def test_the_dependents_start_signed_in_after_the_login_with_one_agent_step_each(runs: Runs) -> None:
    run = runs.first
    assert run.exit_code == 0, run.stdout + run.stderr
    assert statuses(run) == {name: ("passed", "agent") for name in [*DEPENDENTS, "Log in"]}
    for name in DEPENDENTS:
        t = run.test(name)
        assert t["steps"] == 1 and t["usage"]["llm_calls"] == 1, t
        assert [e["ok"] for e in t["expectations"]] == [True, True]  # the cookie AND the localStorage profile arrived
    assert len(runs.tokens["first"]) == 1  # one login for the whole run
    login_posted = runs.requests["first"].index(("POST", "/app/login"))
    first_dependent_page = next(
        i
        for i, (method, path) in enumerate(runs.requests["first"])
        if path.split("?")[0] in ("/app/orders", "/app/settings", "/app/billing")
    )
    assert login_posted < first_dependent_page  # they waited for the login, though listed before it
    assert all(signed_in for _, signed_in in runs.visits["first"])  # not one page was opened signed out


def test_the_login_test_reports_its_own_tokens_and_each_dependent_far_fewer(runs: Runs) -> None:
    login = runs.first.test("Log in")["usage"]
    for name in DEPENDENTS:
        assert runs.first.test(name)["usage"]["total_tokens"] < login["total_tokens"]


def test_a_replay_logs_in_again_and_the_dependents_replay_with_that_fresh_login(runs: Runs) -> None:
    run = runs.replay
    assert run.exit_code == 0, run.stdout + run.stderr
    assert statuses(run) == {name: ("passed", "replayed") for name in [*DEPENDENTS, "Log in"]}
    assert runs.calls["replay"] == []  # not one LLM call: the login and its dependents all replayed
    assert len(runs.tokens["replay"]) == 1  # a new session, the first run's having expired
    assert all(signed_in for _, signed_in in runs.visits["replay"])


def test_only_a_dependent_runs_its_login_first(runs: Runs) -> None:
    run = runs.only
    assert run.exit_code == 0, run.stdout + run.stderr
    assert statuses(run) == {"Orders": ("passed", "agent"), "Log in": ("passed", "agent")}
    assert run.test("Log in")["setup_only"] is True and run.test("Orders")["setup_only"] is False


def test_a_login_that_fails_errors_its_dependent_without_a_browser_or_an_llm_call(runs: Runs) -> None:
    run = runs.failing
    assert run.exit_code == 1
    login, orders = run.test("Log in"), run.test("Orders")
    assert login["status"] == "failed"
    assert orders["status"] == "errored" and orders["path"] == "none", orders
    assert orders["reason"] == "setup test 'Log in' did not pass: agent: The password is refused."
    assert orders["usage"]["llm_calls"] == 0 and orders["steps"] == 0
    assert [c for c in runs.calls["failing"] if c["scenario"] == "orders"] == []
    assert not any(path == "/app/orders" for _, path in runs.requests["failing"])  # its browser never opened it
    assert "setup test 'Log in' did not pass" in run.stdout


def test_the_session_cookie_is_in_no_output_file_cache_entry_or_console_output(runs: Runs) -> None:
    billing = runs.first.test("Billing")
    # The billing page puts the session into its URL: the final URL is reported, with the value redacted.
    assert "session=<secret>signed in cookie acme_app_session</secret>" in billing["final_url"], billing
    cache_files = [p for p in runs.cache.rglob("*") if p.is_file()]
    assert cache_files
    for name in ("first", "replay", "only"):
        run = getattr(runs, name)
        files = [p for p in run.out.rglob("*") if p.is_file()]
        for token in runs.tokens[name]:
            assert token not in run.stdout + run.stderr
            for path in [*files, *cache_files]:
                assert token.encode() not in path.read_bytes(), path
    history = json.loads((runs.first.out / billing["artifacts"]["history"]).read_text(encoding="utf-8"))
    assert "<secret>signed in cookie acme_app_session</secret>" in json.dumps(history)
