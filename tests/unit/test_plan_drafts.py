"""Planning's pure parts: a draft becomes a manifest test or says why not (secrets as placeholders only), and the
plan's YAML: valid under the schema, a comment per test, page text kept inert."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from preview_qa.engine.step_cache import opened
from preview_qa.manifest import loader
from preview_qa.manifest.models import TestSpec
from preview_qa.planning.drafts import Draft, to_test
from preview_qa.planning.output import PlanText, Proposed, render
from preview_qa.secrets.redact import Redactor

SCHEMA = json.loads((Path(__file__).parents[2] / "schema" / "manifest-v1.json").read_text(encoding="utf-8"))
MANIFEST = loader.loads(
    """
version: 1
tests:
  - name: Log in
    start: /login
    task: Log in with <secret>pw</secret>.
    secrets: {pw: QA_PASSWORD}
"""
)
SCRUB = Redactor({"pw": "hunter2-secret"}).text


def draft(**keys: object) -> Draft:
    return Draft.model_validate({"name": "Saves", "task": "Press Save.", "expect_text": ["Saved"], **keys})


def test_a_draft_becomes_a_tagged_test_on_its_start() -> None:
    spec = to_test(draft(expect_elements=[{"role": "button", "name": "Save"}]), "/settings", MANIFEST, SCRUB, set())
    assert isinstance(spec, TestSpec)
    assert (spec.start, spec.expect.text, spec.tags) == ("/settings", ["Saved"], ["drafted"])
    assert spec.expect.element[0].name == "Save"


def test_a_secret_value_becomes_its_declared_placeholder() -> None:
    spec = to_test(draft(task="Log in with hunter2-secret and press Save."), "/", MANIFEST, SCRUB, set())
    assert isinstance(spec, TestSpec)
    assert spec.task == "Log in with <secret>pw</secret> and press Save." and spec.secrets == {"pw": "QA_PASSWORD"}


def test_drafts_that_cannot_be_proposed_say_why() -> None:
    assert "names a secret" in str(to_test(draft(expect_text=["hunter2-secret"]), "/", MANIFEST, SCRUB, set()))
    assert "does not declare" in str(to_test(draft(task="Type <secret>token</secret>."), "/", MANIFEST, SCRUB, set()))
    assert "proves nothing" in str(to_test(draft(expect_text=[" "]), "/", MANIFEST, SCRUB, set()))


def test_names_stay_unique() -> None:
    taken = {"Log in", "Saves"}
    spec = to_test(draft(), "/", MANIFEST, SCRUB, taken)
    assert isinstance(spec, TestSpec) and spec.name == "Saves (2)" and "Saves (2)" in taken


def test_a_test_written_as_steps_visits_the_pages_it_opens() -> None:
    test = TestSpec.model_validate({"name": "cart", "steps": [{"do": "Add it"}, {"open": "/cart"}, {"open": "/pay"}]})
    assert opened(test) == ["/cart", "/pay"]


def test_the_plan_is_valid_yaml_under_the_schema_with_a_comment_per_test() -> None:
    hostile = "Save\nversion: 2\n# tests: []"
    spec = to_test(draft(task="Press Save. ```", expect_text=[hostile, "x: {y}"]), "/s", MANIFEST, SCRUB, set())
    assert isinstance(spec, TestSpec)
    text = PlanText("http://preview", [Proposed(spec, "/s\ntests: []", ("app/s/page.tsx\nversion: 9",), "passed")])
    text.dropped["Bad\ndraft"] = "failed:\nversion: 3"
    plan = render(text, {"max_steps": 8})
    data = yaml.safe_load(plan)
    jsonschema.validate(data, SCHEMA)
    assert data["version"] == 1 and data["defaults"] == {"max_steps": 8}
    assert data["tests"][0]["expect"]["text"] == [hostile, "x: {y}"]
    assert loader.loads(plan).tests[0].expect.text == [hostile, "x: {y}"]
    assert "  # route: /s tests: [] (changed: app/s/page.tsx version: 9)" in plan.splitlines()
    assert "# - Bad draft: failed: version: 3" in plan.splitlines()
    assert not [line for line in plan.splitlines() if line.strip().startswith(("version: 2", "# tests"))]


def test_every_draft_writes_its_keys_in_one_order_its_start_after_its_name_even_at_the_root() -> None:
    home = TestSpec(name="Home", line=0, start="/", task="Look.", tags=["drafted"], expect={"text": "Hi"})
    about = home.model_copy(update={"name": "About", "start": "/about"})
    plan = render(PlanText("http://preview", [Proposed(s, s.start, (), "passed") for s in (home, about)]))
    assert [list(t) for t in yaml.safe_load(plan)["tests"]] == [["name", "start", "task", "expect", "tags"]] * 2


def test_no_draft_passed_means_no_yaml() -> None:
    assert render(PlanText("http://preview")) == ""


def test_plan_prove_proves_the_drafts_as_a_run_proves_its_tests(tmp_path: Path, monkeypatch: Any) -> None:
    """`plan --prove` hands planning a run config that proves (the trial runs then prove each draft that passed)."""
    from click.testing import CliRunner

    from preview_qa import app, cli
    from preview_qa.results import PlanSummary

    seen: list[bool] = []
    monkeypatch.setattr(app, "plan_only", lambda _m, config, _env, _plan, _v: seen.append(config.prove) or PlanSummary())
    qa = tmp_path / "qa.yml"
    qa.write_text("version: 1\ntests:\n  - {name: a, task: Look., start: /a}\n", encoding="utf-8")
    base = ["plan", str(qa), "--base-url", "http://preview.test", "--route", "/b", "--api-key", "k"]
    for extra in ([], ["--prove"]):
        outcome = CliRunner().invoke(cli.main, [*base, *extra])
        assert outcome.exit_code == 0, outcome.output
    assert seen == [False, True]


def test_the_login_a_plan_carries_is_the_manifests_test_exactly_as_written(tmp_path: Path) -> None:
    """Not the test with the manifest's defaults merged in (#65, 9): no `timeout: 120.0` it never had."""
    written = {"name": "Log in", "start": "/login/", "task": "Log in.", "save_state": "demo", "expect": {"url": "/dashboard"}}
    (tmp_path / "qa.yml").write_text(yaml.safe_dump({"version": 1, "defaults": {"timeout": 120}, "tests": [written]}))
    manifest = loader.load(tmp_path / "qa.yml")
    draft = TestSpec(name="Dashboard", line=0, start="/dashboard", task="Check it.", use_state="demo", expect={"text": "Hi"})
    text = PlanText("http://preview", [Proposed(draft, "/dashboard", (), "passed")])
    text.logins = [manifest.as_written(t) for t in manifest.tests]
    rendered = render(text, {"timeout": 120.0, "expect": {"timeout": 2.5}})  # the defaults' JSON dump: floats
    plan = yaml.safe_load(rendered)
    assert plan["tests"][0] == written and plan["defaults"] == {"timeout": 120, "expect": {"timeout": 2.5}}
    assert "defaults:\n  timeout: 120\n  expect:\n    timeout: 2.5\n" in rendered  # as the manifest says it, not 120.0
