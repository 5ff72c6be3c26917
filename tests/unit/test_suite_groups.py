"""The suite's spread over pytest-xdist's workers (tests/groups.py): tests that read one shared run are kept on one
worker (one xdist_group), the others are spread one by one; a file's two shared runs are two groups."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.groups import groups

ROOT = Path(__file__).parents[2]


def test_tests_joined_by_a_shared_run_share_a_group_and_the_others_have_none() -> None:
    found = groups(
        [
            ("a::one", ["a::run"]),
            ("a::two", ["a::run", "a::exported"]),  # reads the export made from the run: joins the two
            ("a::three", ["a::exported"]),
            ("a::alone", []),
            ("b::replay", ["b::replayed"]),
            ("b::agent", ["b::run"]),
            ("c::card", ["demo_run"]),  # a session run, read by two files
            ("d::export", ["demo_run"]),
            ("e::param", ["e::provider_run-1"]),
        ]
    )
    assert found == {
        "a::one": "a::exported",
        "a::two": "a::exported",
        "a::three": "a::exported",
        "b::replay": "b::replayed",
        "b::agent": "b::run",
        "c::card": "demo_run",
        "d::export": "demo_run",
        "e::param": "e::provider_run-1",
    }


def test_a_group_name_holds_nothing_xdist_splits_a_test_id_on() -> None:
    [name] = set(groups([("x", ["m::run[1]@a"])]).values())
    assert "@" not in name and "]" not in name


def test_the_e2e_files_are_grouped_by_the_runs_their_tests_read() -> None:
    """Collected as pytest-xdist's workers collect them: each test of a shared run carries that run's group."""
    marks: dict[str, list[str]] = {}

    class Groups:
        @pytest.hookimpl(trylast=True)
        def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
            marks.update({item.nodeid: [m.args[0] for m in item.iter_markers("xdist_group")] for item in items})

    files = ["tests/e2e/test_moving_pages.py", "tests/e2e/test_budgets.py"]
    code = pytest.main(["-q", "--co", "-n", "0", "-p", "no:cacheprovider", "--rootdir", str(ROOT), *files], plugins=[Groups()])
    assert code == 0
    moving = "tests/e2e/test_moving_pages.py::"
    assert marks[f"{moving}test_a_page_that_polls_forever_passes_quiet_apart_from_its_polls"] == [f"{moving}moving"]
    assert marks[f"{moving}test_dialogs_are_answered_as_asked_by_a_replay[alert]"] == [f"{moving}replayed"]
    budgets = "tests/e2e/test_budgets.py::"
    assert marks[f"{budgets}test_a_test_over_its_cost_budget_is_errored_naming_it"] == [f"{budgets}budget_run"]
    # its own CLI run, nothing shared (the session's fixture site is cheap): spread on its own
    assert marks[f"{budgets}test_a_cost_budget_on_a_model_of_unknown_price_is_refused_before_the_run"] == []


def test_the_e2e_tests_come_first_then_the_unit_property_tests_then_the_other_unit_tests() -> None:
    """pytest-xdist hands out the tests of their own in this order: a long property test collected among the last files
    (test_schema.py's, up to 28 s) could keep one worker busy at the end after the others had none left."""
    order: list[str] = []

    class Order:
        @pytest.hookimpl(trylast=True)
        def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
            order.extend(item.nodeid for item in items)

    files = ["tests/unit/test_quotes.py", "tests/unit/test_schema.py", "tests/e2e/test_budgets.py"]
    code = pytest.main(["-q", "--co", "-n", "0", "-p", "no:cacheprovider", "--rootdir", str(ROOT), *files], plugins=[Order()])
    assert code == 0
    e2e = [test for test in order if test.startswith("tests/e2e/")]
    prop = "test_what_the_loader_accepts_the_schema_validates_and_what_the_schema_refuses_the_loader_refuses"
    properties = [test for test in order if test.endswith(("_however_it_is_punctuated", prop))]
    assert len(e2e) > 1 and len(properties) == 2, order
    assert order[: len(e2e) + 2] == [*e2e, *properties]  # test_quotes.py's property first, as collected
    assert order[len(e2e) + 2].startswith("tests/unit/test_quotes.py::test_a_quote_is_found")  # then the rest, in order


def test_pytest_xdist_runs_a_group_on_one_worker(tmp_path: Path) -> None:
    """The marks above only help if pytest-xdist honours them: pytest 9.2 broke that silently (pytest-xdist#1386), and
    every shared run then ran once on each worker. Eight tests of one group and eight others, on two real workers."""
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    (tmp_path / "test_spread.py").write_text(
        "import os, pathlib, pytest\n"
        "@pytest.mark.parametrize('i', range(8))\n"
        "def test_alone(i): pass\n"
        "@pytest.mark.xdist_group('shared')\n"
        "@pytest.mark.parametrize('i', range(8))\n"
        "def test_grouped(i):\n"
        "    pathlib.Path(f'ran-{i}').write_text(os.environ['PYTEST_XDIST_WORKER'])\n",
        encoding="utf-8",
    )
    args = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2", "--dist=loadgroup"]
    proc = subprocess.run(
        args, cwd=tmp_path, capture_output=True, text=True, timeout=120, env=os.environ | {"PYTEST_ADDOPTS": ""}
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    ran = [path.read_text(encoding="utf-8") for path in tmp_path.glob("ran-*")]
    assert len(ran) == 8 and len(set(ran)) == 1, ran


def test_the_suite_starts_two_workers_a_core_unless_told(pytestconfig: pytest.Config, monkeypatch: pytest.MonkeyPatch) -> None:
    """`--numprocesses=logical` (pyproject's addopts) asks this hook, and tests/conftest.py answers before
    pytest-xdist's own (one a core); PYTEST_XDIST_AUTO_NUM_WORKERS still decides when set."""
    monkeypatch.delenv("PYTEST_XDIST_AUTO_NUM_WORKERS", raising=False)
    assert pytestconfig.hook.pytest_xdist_auto_num_workers(config=pytestconfig) == 2 * len(os.sched_getaffinity(0))
    monkeypatch.setenv("PYTEST_XDIST_AUTO_NUM_WORKERS", "3")
    assert pytestconfig.hook.pytest_xdist_auto_num_workers(config=pytestconfig) == 3
