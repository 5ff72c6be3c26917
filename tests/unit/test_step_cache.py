"""A test written as steps in the replay cache: each goal's key covers the steps up to it (and nothing after), which goals a
run keeps (its own checks held, or a later step's, or the test passed), and the export of such a test from its goals'
recordings: one `with step(...)` (Python) or `test.step` (TypeScript) block per test step."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from preview_qa.config import RunConfig
from preview_qa.engine.agent_port import Recording, StepRecordings
from preview_qa.engine.replay_cache import CacheReporter, RecordingCache
from preview_qa.engine.step_cache import goal_definition, recordable_goals, steps_visited
from preview_qa.events import AgentHistory, StepRecorded, TestFinished
from preview_qa.export import Language, export_test
from preview_qa.manifest.models import Manifest, TestSpec
from preview_qa.results import Status, StepExecution, StepResult, StepStatus, TestResult

STEPS: list[dict[str, Any]] = [
    {"do": "Log in", "expect": {"url": "/dashboard"}},
    {"do": "Add the anvil"},
    {"open": "/cart", "expect": {"text": "Cart: 1 item"}},
    {"do": "Pay"},
]
HISTORY = {"history": [{"model_output": {"action": [{"click": {"index": 3}}]}, "metadata": {"step_number": 1}}]}


def steps_spec(*steps: dict[str, Any], **kw: Any) -> TestSpec:
    return TestSpec.model_validate({"name": "checkout", "start": "/login", "steps": list(steps or STEPS), **kw})


def cache(tmp_path: Path, test: TestSpec) -> RecordingCache:
    return RecordingCache(tmp_path, Manifest(version=1, tests=[test]), "openai", "gpt-x")


def keys(tmp_path: Path, test: TestSpec) -> list[str]:
    return [cache(tmp_path, test).key(test, step=i) for i in (1, 2, 4)]


@pytest.mark.parametrize(
    ("where", "changed", "kept"),
    [
        (0, {"do": "Log in as admin", "expect": {"url": "/dashboard"}}, [False, False, False]),  # a goal, and every later
        (1, {"do": "Add the anvil", "expect": {"text": "Added"}}, [True, False, False]),  # a goal's checks
        (2, {"open": "/basket", "expect": {"text": "Cart: 1 item"}}, [True, True, False]),  # a step before the last goal
    ],
)
def test_a_goals_key_covers_the_steps_up_to_it(tmp_path: Path, where: int, changed: dict[str, Any], kept: list[bool]) -> None:
    steps = [*STEPS]
    steps[where] = changed
    before, after = keys(tmp_path, steps_spec()), keys(tmp_path, steps_spec(*steps))
    assert [a == b for a, b in zip(before, after, strict=True)] == kept


def test_names_timeouts_and_later_steps_leave_a_goals_key_alone(tmp_path: Path) -> None:
    renamed = [{**STEPS[0], "name": "Sign in", "expect": {"url": "/dashboard", "timeout": 2}}, *STEPS[1:3], {"do": "Refund"}]
    before, after = keys(tmp_path, steps_spec()), keys(tmp_path, steps_spec(*renamed))
    assert before[:2] == after[:2] and before[2] != after[2]
    assert cache(tmp_path, steps_spec()).key(steps_spec()) != before[0]  # a goal's key is not its test's


def results(*statuses: StepStatus) -> list[StepResult]:
    kinds = ["do", "do", "open", "do"]
    return [StepResult(index=i, name="s", kind=kinds[i - 1], status=s) for i, s in enumerate(statuses, start=1)]


def test_a_goal_is_kept_once_its_own_checks_or_a_later_steps_held() -> None:
    test, ok, failed, not_run = steps_spec(), StepStatus.PASSED, StepStatus.FAILED, StepStatus.NOT_RUN
    assert recordable_goals(test, results(ok, ok, ok, ok), test_passed=True) == [1, 2, 4]
    assert recordable_goals(test, results(ok, ok, failed, not_run), test_passed=False) == [1]  # step 3 did not hold
    assert recordable_goals(test, results(ok, failed, not_run, not_run), test_passed=False) == [1]
    assert recordable_goals(test, results(ok, ok, ok, failed), test_passed=False) == [1, 2]  # 4 has no checks, and failed


def test_the_reporter_files_each_kept_goal_under_its_own_key(tmp_path: Path) -> None:
    test = steps_spec()
    store = cache(tmp_path, test)
    reporter = CacheReporter(
        store, Manifest(version=1, tests=[test]), RunConfig(manifest=Path("qa.yml"), base_url="http://old:1")
    )
    reporter.handle(StepRecorded("checkout", 3, "", [], "", None, None, before_png=b"png3"))
    for step, before in ((1, 0), (2, 2)):
        reporter.handle(AgentHistory("checkout", HISTORY, step=step, before=before))
    steps = [
        StepResult(index=1, name="s", kind="do", status=StepStatus.PASSED, execution=StepExecution.AGENT, agent_steps=(1, 2)),
        StepResult(index=2, name="s", kind="do", status=StepStatus.PASSED, execution=StepExecution.AGENT, agent_steps=(3, 3)),
        StepResult(index=3, name="s", kind="open", status=StepStatus.FAILED, execution=StepExecution.EXACT),
    ]
    result = TestResult(name="checkout", file="qa.yml", line=1, status=Status.FAILED, reason="x", step_results=steps)
    reporter.handle(TestFinished(result))
    assert store.load(test, step=1) is not None and store.load(test, step=2) is None  # 2's check came later: it failed
    lookup = store.lookup(test)
    assert sorted(getattr(lookup, "by_step", {})) == [1]


def test_a_step_test_exports_one_block_per_step_with_its_checks() -> None:
    test = steps_spec(
        {"do": "Log in", "expect": {"url": "/dashboard"}},
        {"fill": {"label": "Coupon", "value": "<secret>code</secret>"}},
        {"press": {"label": "Coupon", "key": "Enter"}},
        {"click": {"role": "button", "name": "Pay"}, "expect": {"text": "Paid"}},
        secrets={"code": "COUPON"},
    )
    python = export_test(test, {}, "http://old:1", "qa.yml:3", Language.PYTHON, {1: HISTORY})
    assert "with step(\"step 2 of 4: Fill the field labelled 'Coupon' with '<secret>code</secret>'\"):" in python
    assert 'page.get_by_label("Coupon").fill(os.environ["COUPON"])' in python
    assert 'page.get_by_label("Coupon").press("Enter")' in python
    assert 'page.get_by_role("button", name="Pay").click()' in python  # contained, as the step found it
    assert "# agent step 1" in python and 'page.goto("/login")' in python
    typescript = export_test(test, {}, "http://old:1", "qa.yml:3", Language.TS, {1: HISTORY})
    assert "await test.step(\"step 4 of 4: Click button 'Pay'\", async () => {" in typescript
    assert 'await page.getByLabel("Coupon").fill(secret("COUPON"));' in typescript
    compile(python, "exported.py", "exec")


def test_every_exact_action_exports_the_locator_it_ran_with_css_test_id_and_role_alike() -> None:
    test = steps_spec(
        {"select": {"css": "select[name=_filter_column]", "option": "name"}},
        {"select": {"role": "combobox", "name": "Sort", "option": "id"}},
        {"fill": {"test_id": "query", "value": "x"}},
        {"press": {"css": "input.q", "key": "Enter"}},
        {"click": {"test_id": "apply"}},
    )
    python = export_test(test, {}, "http://old:1", "qa.yml:3", Language.PYTHON, {})
    assert 'page.locator("select[name=_filter_column]").select_option("name")' in python
    assert 'page.get_by_role("combobox", name="Sort").select_option("id")' in python
    assert 'page.get_by_test_id("query").fill("x")' in python
    assert 'page.locator("input.q").press("Enter")' in python and 'page.get_by_test_id("apply").click()' in python
    typescript = export_test(test, {}, "http://old:1", "qa.yml:3", Language.TS, {})
    assert 'await page.locator("select[name=_filter_column]").selectOption("name");' in typescript
    assert 'await page.getByTestId("apply").click();' in typescript
    compile(python, "exported.py", "exec")


def test_a_goal_after_exact_steps_keeps_its_key_when_they_use_no_new_locator(tmp_path: Path) -> None:
    """css and test_id (and select's and press's role) came later: a step that uses none of them keys as before."""
    test = steps_spec({"select": {"label": "Ship", "option": "Express"}}, {"press": {"key": "Tab"}}, {"do": "Pay"})
    steps = goal_definition(test, 3)["steps"]
    assert (steps[0]["select"], steps[1]["press"]) == (
        {"label": "Ship", "option": "Express", "exact": False},
        {"key": "Tab", "label": None, "exact": False},
    )
    by_css = steps_spec({"select": {"css": "#ship", "option": "Express"}}, {"press": {"key": "Tab"}}, {"do": "Pay"})
    assert cache(tmp_path, by_css).key(by_css, step=3) != cache(tmp_path, test).key(test, step=3)


def test_a_step_tests_pages_are_known_once_every_goal_is_recorded() -> None:
    test = steps_spec()
    recorded = Recording("http://p:1", HISTORY, visited=["http://p:1/login", "http://p:1/dashboard", "http://cdn:2/x"])
    assert steps_visited(test, StepRecordings({1: recorded, 2: recorded})) is None  # goal 4 has none: the test runs
    every = StepRecordings({1: recorded, 2: recorded, 4: recorded})
    assert steps_visited(test, every) == ["/login", "/dashboard", "/cart"]  # its `open` too
    exact_only = steps_spec({"open": "/cart"})
    assert steps_visited(exact_only, StepRecordings()) is None  # no recording says where its clicks lead
