"""`preview-qa plan` and `demo --plan` on the demo site (issue #39): drafts are tried before anyone reads them, the
wrong one is dropped with its reason, the plan validates and passes when run, and --write never overwrites."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from preview_qa.demo.runner import PLAN
from preview_qa.demo.scripted_llm import ScriptedLLM, load_scenarios
from tests.conftest import DEMO_PASSWORD, run_args, run_in_process
from tests.site import DemoSite

DRAFTS = load_scenarios(PLAN)
TOKEN = "tok-9f8e7d-preview-secret"  # the /search page shows the X-Preview-Token header it was sent
LEAKY = {  # an LLM that copies the token it was never shown (it is redacted) into its drafts
    "name": "plan-search",
    "match": "<route>/search</route>",
    "drafts": [
        {"name": "Token shown", "task": "Open the search page.", "expect_text": [f"Preview token: {TOKEN}"]},
        {"name": "Token typed", "task": f"Type {TOKEN} into Access code and press Search.", "expect_text": ["Search"]},
    ],
}


def test_demo_plan_proposes_drafts_that_validate_and_pass_and_drops_the_wrong_one(tmp_path: Path, site: DemoSite) -> None:
    out = tmp_path / "demo"
    demo = run_in_process(["demo", "--plan", "--out", str(out), "--only", "Product price is shown"])
    assert demo.returncode == 0, demo.stderr
    assert "plan: dropped 'Help offers a video tour': did not pass its trial run (failed:" in demo.stderr
    assert "may have found a regression" in demo.stderr
    assert "plan: /help: 1 of 2 draft(s) passed their trial run and are not vacuous" in demo.stderr
    assert "plan: changed files that map to no route: README.md" in demo.stderr
    plan = out / "plan.yml"
    text = plan.read_text(encoding="utf-8")
    assert "# changed files that map to no route: README.md" in text
    assert "# /product is covered: test 'Product price is shown' starts there" in text
    assert "  # route: /blog/[slug] (changed: app/blog/[slug]/page.tsx)" in text
    tests = yaml.safe_load(text)["tests"]
    assert [t["name"] for t in tests] == ["Help's button thanks the reader", "A blog post takes a subscription"]
    assert all(t["expect"] for t in tests) and tests[1]["start"] == "/blog/dropping-anvils-safely"
    assert "Help offers a video tour" not in [t["name"] for t in tests]

    valid = run_in_process(["validate", "--offline", str(plan)])
    assert valid.returncode == 0 and "2 test(s), valid" in valid.stdout
    with ScriptedLLM(DRAFTS) as llm:  # the plan as a team would run it: every proposed test passes
        ran = run_in_process(run_args(plan, site.url, tmp_path / "out", llm))
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "2 passed" in ran.stdout


def test_plan_writes_its_yaml_once_and_never_overwrites(tmp_path: Path, site: DemoSite) -> None:
    manifest = tmp_path / "qa.yml"
    manifest.write_text("version: 1\ntests:\n  - {name: Home, start: /, task: Open the home page.}\n", encoding="utf-8")
    target = tmp_path / "drafts.yml"
    with ScriptedLLM([LEAKY, *DRAFTS]) as llm:
        args = ["plan", str(manifest), "--base-url", site.url, "--llm-base-url", llm.url, "--api-key", "k", "--model", "scripted"]
        header = ["--extra-header", f"X-Preview-Token: {TOKEN}"]
        routes = ["--route", "/blog/[slug]", "--route", "/search", "--route", "/dashboard"]
        planned = run_in_process([*args, *header, *routes, "--write", str(target)])
        assert planned.returncode == 0, planned.stderr
        written = target.read_text(encoding="utf-8")
        assert "A blog post takes a subscription" in written and "start: /blog/dropping-anvils-safely" in written
        # planning sends the protected preview its header, yet no draft, prompt or output holds the token
        drafting = [json.dumps(r) for r in llm.requests if "<route>/search</route>" in json.dumps(r)]
        assert drafting and "header:X-Preview-Token" in drafting[0] and not any(TOKEN in r for r in drafting)
        assert "plan: dropped 'Token shown': a check names a secret" in planned.stderr
        assert "plan: dropped 'Token typed': its task needs the secret" in planned.stderr
        assert TOKEN not in written + planned.stdout + planned.stderr
        assert "plan: /dashboard: not drafted: its page led to /login (behind a login?" in planned.stderr
        again = run_in_process([*args, "--route", "/help", "--write", str(target)])
    assert again.returncode == 2
    assert "drafts.yml already exists; nothing was written" in again.stderr
    assert target.read_text(encoding="utf-8") == written


def test_plan_refuses_a_budget_it_cannot_enforce_and_needs_something_to_plan_for(tmp_path: Path, site: DemoSite) -> None:
    manifest = tmp_path / "qa.yml"
    manifest.write_text("version: 1\ntests:\n  - {name: Home, task: Open the home page.}\n", encoding="utf-8")
    args = ["plan", str(manifest), "--base-url", site.url, "--api-key", "k", "--model", "no-such-model"]
    unpriced = run_in_process([*args, "--route", "/help", "--run-max-cost-usd", "0.5"])
    assert unpriced.returncode == 2
    assert "--run-max-cost-usd cannot be enforced: no price is known for model 'no-such-model'" in unpriced.stderr
    run = ["run", *args[1:], "--out", str(tmp_path / "out"), "--plan", "--plan-max-cost-usd", "0.5"]
    refused = run_in_process(run)  # before any test runs
    assert refused.returncode == 2 and "--plan-max-cost-usd cannot be enforced" in refused.stderr
    assert not (tmp_path / "out" / "results.json").exists()
    nothing = run_in_process(args)
    assert nothing.returncode == 2 and "give the changed files (--changed-files or --changed-only) or a --route" in nothing.stderr


LOGIN_MANIFEST = """version: 1
defaults: {timeout: 120}
tests:
  - name: Log in
    start: /login
    task: Log in as demo@acme.test with password <secret>demo_password</secret> and check the dashboard lists three orders.
    secrets: {demo_password: DEMO_PASSWORD}
    save_state: demo
    expect: {url: /dashboard}
"""
STEPS_LOGIN_MANIFEST = """version: 1
defaults: {timeout: 120}
tests:
  - name: Log in
    start: /login
    secrets: {demo_password: DEMO_PASSWORD}
    save_state: demo
    steps:
      - fill: {label: Email, value: demo@acme.test}
      - fill: {label: Password, value: "<secret>demo_password</secret>"}
      - click: {role: button, name: Log in}
        expect: {url: /dashboard}
"""
DASHBOARD = [
    {
        "name": "plan-dashboard",
        "match": "<route>/dashboard</route>",
        "drafts": [
            {
                "name": "The dashboard lists the orders",
                "task": "Check the dashboard lists your orders.",
                "expect_text": ["Your orders"],
            }
        ],
    },
    {"name": "draft-dashboard", "match": "lists your orders", "turns": [{"done": {"status": "pass", "reason": "Listed."}}]},
]


@pytest.mark.parametrize("written", [LOGIN_MANIFEST, STEPS_LOGIN_MANIFEST], ids=["task", "steps"])
def test_a_route_behind_the_login_is_read_and_tried_signed_in_with_the_manifest_s_saved_login(
    tmp_path: Path, site: DemoSite, written: str
) -> None:
    """The login as a task (the agent signs in) or as exact steps (Playwright does, as `run` does: #65, 1)."""
    manifest, target = tmp_path / "qa.yml", tmp_path / "drafts.yml"
    manifest.write_text(written, encoding="utf-8")
    login = load_scenarios(PLAN.parent / "agent.yml")  # the demo's scripted login
    with ScriptedLLM([*DASHBOARD, *login]) as llm:
        args = ["plan", str(manifest), "--base-url", site.url, "--llm-base-url", llm.url, "--api-key", "k", "--model", "scripted"]
        planned = run_in_process([*args, "--route", "/dashboard", "--write", str(target)])
    assert planned.returncode == 0, planned.stderr
    assert "plan: /dashboard: 1 of 1 draft(s) passed their trial run" in planned.stderr, planned.stderr
    tests = yaml.safe_load(target.read_text(encoding="utf-8"))["tests"]
    assert [(t["name"], t.get("use_state"), t.get("save_state")) for t in tests] == [
        ("Log in", None, "demo"),  # the manifest's login, carried so that the plan runs alone
        ("The dashboard lists the orders", "demo", None),
    ]
    assert tests[0] == yaml.safe_load(written)["tests"][0]  # exactly as written: no default merged in (#65, 9)
    assert DEMO_PASSWORD not in target.read_text(encoding="utf-8") + planned.stderr + planned.stdout
    assert run_in_process(["validate", "--offline", str(target)]).returncode == 0


def test_plan_exits_1_with_the_cause_when_no_route_got_a_draft_to_try(tmp_path: Path, site: DemoSite) -> None:
    """The only route needed a draft, but the login behind it failed: nothing was planned, so plan fails (#65, 4)."""
    manifest = tmp_path / "qa.yml"
    manifest.write_text(STEPS_LOGIN_MANIFEST.replace("label: Email,", "label: Emial,"), encoding="utf-8")
    with ScriptedLLM(DASHBOARD) as llm:
        args = ["plan", str(manifest), "--base-url", site.url, "--llm-base-url", llm.url, "--api-key", "k", "--model", "scripted"]
        planned = run_in_process([*args, "--route", "/dashboard"])
        assert not llm.requests  # the page was behind the login: nothing was asked of the LLM
    assert planned.returncode == 1, planned.stderr
    last = planned.stderr.splitlines()[-1]
    assert last.startswith(
        "plan: nothing could be planned: no draft was tried (/dashboard: its page led to /login (behind a login? its login "
        "test 'Log in' did not pass: step 1 of 3"
    ), last
    assert "no element matches the field labelled 'Emial'" in last and not planned.stdout
