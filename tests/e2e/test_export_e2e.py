"""An exported test runs without preview-qa or an LLM: the demo's passing tests, exported from its results folder, pass
under pytest-playwright against the demo site and fail against one whose login broke; the TypeScript spec likewise
under `npx playwright test` when Node and a local @playwright/test are there."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import DEMO_PASSWORD, CliRun, run_in_process
from tests.e2e.exported import NO_PLAYWRIGHT_TEST, npx_run, playwright_test, pytest_run
from tests.site import DemoSite

pytestmark = pytest.mark.e2e
DEMO_MANIFEST = Path(__file__).parents[2] / "src" / "preview_qa" / "demo" / "qa.yml"
PASSING = ["Log in shows three orders", "Signup rejects a bad email", "Product price is shown", "Orders after signing in"]


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory, demo_run: CliRun) -> Iterator[dict[str, Path]]:
    """The demo run once, and each of its passing tests exported in both languages."""
    folder = tmp_path_factory.mktemp("export")
    assert demo_run.exit_code == 0, demo_run.stderr
    files: dict[str, Path] = {}
    for lang in ("python", "ts"):
        (folder / lang).mkdir()
        for name in PASSING:
            done = run_in_process(
                ["export", str(DEMO_MANIFEST), "--test", name, "--results", str(demo_run.out), "--lang", lang],
                cwd=folder / lang,
            )
            assert done.returncode == 0, done.stderr
        files[lang] = folder / lang
    yield files


def test_the_exported_python_tests_pass_on_the_same_site(exported: dict[str, Path], site: DemoSite) -> None:
    written = sorted(p.name for p in exported["python"].glob("test_*.py"))
    assert written == [
        "test_log_in_shows_three_orders.py",
        "test_orders_after_signing_in.py",  # written as steps: a `with step(...)` block each
        "test_product_price_is_shown.py",
        "test_signup_rejects_a_bad_email.py",
    ]
    assert DEMO_PASSWORD not in "".join(p.read_text(encoding="utf-8") for p in exported["python"].iterdir())
    done = pytest_run(exported["python"], site.url, DEMO_PASSWORD=DEMO_PASSWORD)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "4 passed" in done.stdout


def test_an_exported_test_fails_when_its_page_breaks(exported: dict[str, Path]) -> None:
    with DemoSite(password="the-login-now-rejects-the-old-password") as broken:
        done = pytest_run(exported["python"], broken.url, DEMO_PASSWORD=DEMO_PASSWORD)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "2 failed, 2 passed" in done.stdout
    assert "FAILED test_log_in_shows_three_orders.py" in done.stdout
    assert "in step 3 of 6: Click button 'Log in'" in done.stdout  # the steps test says which step broke


def test_the_exported_typescript_specs_pass_and_fail_likewise(exported: dict[str, Path], site: DemoSite) -> None:
    project = playwright_test()
    if project is None:
        pytest.skip(NO_PLAYWRIGHT_TEST)
    green = npx_run(project, exported["ts"], site.url, DEMO_PASSWORD=DEMO_PASSWORD)
    assert green.returncode == 0, green.stdout + green.stderr
    with DemoSite(password="the-login-now-rejects-the-old-password") as broken:
        red = npx_run(project, exported["ts"], broken.url, DEMO_PASSWORD=DEMO_PASSWORD)
    assert red.returncode == 1 and "2 failed" in red.stdout, red.stdout + red.stderr
