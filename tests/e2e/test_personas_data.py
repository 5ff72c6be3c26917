"""Issue #69 end to end, with exact steps (no LLM): one test run as three personas on a role-based app (an admin sees
/roles/admin, a member gets 403, a guest is sent to sign in), and test data made through the app's API by `before:`
(its answer's id saved and opened as <var>order_id</var>) and deleted by `after:` whether the test passed, failed, or
errored, and when the run is cancelled."""

from __future__ import annotations

import json
import signal
import subprocess
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from preview_qa.demo.scripted_llm import ScriptedLLM
from tests.conftest import CliRun, clean_env, preview_qa_run
from tests.e2e.processes import start_cli, wait_for
from tests.site import DemoSite
from tests.site.roles import SEED_TOKEN

pytestmark = pytest.mark.e2e

SEED = """
    secrets: {seed: SEED_TOKEN}
    before:
      - method: POST
        path: /roles/api/orders
        headers: {X-Seed-Token: "<secret>seed</secret>"}
        json: {item: Anvil}
        save: {order_id: $.order.id}"""
CLEAN = """
    after:
      - {method: DELETE, path: "/roles/api/orders/<var>order_id</var>", expect_status: 204}"""
ORDER = SEED + CLEAN
MANIFEST = f"""
version: 1
defaults: {{timeout: 60}}
personas: {{admin: {{use_state: admin}}, member: {{use_state: member}}, guest: {{}}}}
tests:
  - name: Admin page
    as: [admin, member, guest]
    steps: [{{open: /roles/admin}}]
    expect: {{text: Admin console}}
    expect_as:
      member: {{text: Forbidden, status: 403}}
      guest: {{url: /roles/login, text: Please sign in}}
  - name: A 403 page is no pass by its words
    use_state: member
    steps: [{{open: /roles/admin}}]
    expect: {{text: Forbidden}}
  - name: Log in as admin
    steps: [{{open: "/roles/login?as=admin", expect: {{text: Signed in as admin}}}}]
    save_state: admin
  - name: Log in as member
    steps: [{{open: "/roles/login?as=member", expect: {{text: Signed in as member}}}}]
    save_state: member
  - name: Order page{ORDER}
    steps: [{{open: "/roles/orders/<var>order_id</var>", expect: {{text: Anvil}}}}]
  - name: Order page that fails{ORDER}
    steps: [{{open: "/roles/orders/<var>order_id</var>", expect: {{text: Hammer}}}}]
  - name: Seed that fails{SEED}
      - {{method: POST, path: /roles/api/broken}}{CLEAN}
    steps: [{{open: /roles/admin}}]
  - name: Cleanup that fails{ORDER}
      - {{method: DELETE, path: /roles/api/orders/ord-0}}
    steps: [{{open: "/roles/orders/<var>order_id</var>", expect: {{text: Anvil}}}}]
"""


@dataclass
class Runs:
    run: CliRun
    only: CliRun
    made: list[str]  # the orders the API made during the first run
    live_after: dict[str, str]  # those left once it ended


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, site: DemoSite) -> Runs:
    folder = tmp_path_factory.mktemp("personas")
    manifest = folder / "qa.yml"
    manifest.write_text(textwrap.dedent(MANIFEST), encoding="utf-8")
    env = clean_env(SEED_TOKEN=SEED_TOKEN)
    first = len(site.orders.made)
    run = preview_qa_run(manifest, site.url, folder / "out", None, "--concurrency", "2", env=env)
    made, live = site.orders.made[first:], {k: v for k, v in site.orders.live.items() if k in site.orders.made[first:]}
    only = preview_qa_run(manifest, site.url, folder / "only", None, "--only", "Admin page [member]", env=env)
    return Runs(run, only, made, live)


def statuses(run: CliRun) -> dict[str, str]:
    return {t["name"]: t["status"] for t in run.results["tests"]}


def test_a_test_as_three_personas_gives_three_results_with_their_own_verdicts(runs: Runs) -> None:
    run = runs.run
    got = statuses(run)
    assert {name: got[name] for name in got if name.startswith("Admin page")} == {
        "Admin page [admin]": "passed",
        "Admin page [member]": "passed",
        "Admin page [guest]": "passed",
    }, run.stdout + run.stderr
    assert run.test("Admin page [member]")["persona"] == "member"
    assert run.test("Admin page [guest]")["final_url"].endswith("/roles/login")
    cases = {case.name for suite in run.junit for case in suite}
    assert {"Admin page [admin]", "Admin page [member]", "Admin page [guest]"} <= cases
    assert "Admin page [member]" in (run.out / "report.html").read_text(encoding="utf-8")
    assert "Admin page [guest]" in run.stdout


def test_a_page_answering_4xx_passes_only_where_the_test_expects_that_status(runs: Runs) -> None:
    """Before, any page check on a 4xx page judged it: a 404 page whose nav shows the text a test checks passed."""
    refused = runs.run.test("A 403 page is no pass by its words")
    assert refused["status"] == "failed" and "opening /roles/admin answered HTTP 403" in refused["reason"], refused


def test_only_selects_one_personas_run_by_its_full_name_and_its_setup_test_runs_once(runs: Runs) -> None:
    assert runs.only.exit_code == 0, runs.only.stdout + runs.only.stderr
    assert statuses(runs.only) == {"Admin page [member]": "passed", "Log in as member": "passed"}
    assert runs.only.test("Log in as member")["setup_only"] is True


def test_before_makes_an_order_whose_saved_id_the_test_opens(runs: Runs) -> None:
    order = runs.run.test("Order page")
    assert order["status"] == "passed", order
    assert order["final_url"].split("/roles/orders/")[1] in runs.made
    assert order["after_failed"] == []


def test_after_deletes_what_before_made_whether_the_test_passed_failed_or_errored(runs: Runs) -> None:
    run = runs.run
    assert run.test("Order page that fails")["status"] == "failed"
    seed = run.test("Seed that fails")
    assert seed["status"] == "errored"
    assert seed["reason"] == "before: POST /roles/api/broken answered 500 (expected a 2xx)", seed
    assert len(runs.made) == 4  # one order for each of the four tests that post one
    assert runs.live_after == {}  # every one deleted, the failed and errored tests' too


def test_an_after_that_fails_is_a_warning_on_a_test_that_still_passed(runs: Runs) -> None:
    cleanup = runs.run.test("Cleanup that fails")
    assert cleanup["status"] == "passed", cleanup
    assert cleanup["after_failed"] == ["after: DELETE /roles/api/orders/ord-0 answered 404 (expected a 2xx)"]
    assert "warning: after: DELETE /roles/api/orders/ord-0 answered 404" in runs.run.stdout
    events = (runs.run.out / "tests").rglob("events.jsonl")
    lines = [json.loads(line) for path in events for line in path.read_text(encoding="utf-8").splitlines()]
    requests = [line for line in lines if line["type"] == "api_request"]
    assert requests and all(SEED_TOKEN not in json.dumps(line) for line in requests)
    assert SEED_TOKEN not in runs.run.all_output_text()


CANCELLED = f"""
version: 1
tests:
  - name: Order page that hangs{ORDER}
    steps: [{{open: /slow}}]
"""


def test_after_deletes_what_before_made_when_the_run_is_cancelled(tmp_path: Path, site: DemoSite) -> None:
    first = len(site.orders.made)
    with ScriptedLLM([]) as llm:
        proc = start_cli(tmp_path, CANCELLED, site, llm, env=clean_env(SEED_TOKEN=SEED_TOKEN))
        wait_for(lambda: len(site.orders.made) > first and "/slow" in site.requests, 120, "the order and the page")
        proc.send_signal(signal.SIGINT)
        try:
            proc.communicate(timeout=90)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
    assert proc.returncode == 130
    made = site.orders.made[first:]
    assert len(made) == 1 and made[0] in site.orders.deleted and made[0] not in site.orders.live
    result = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))["tests"][0]
    assert result["status"] == "errored"
