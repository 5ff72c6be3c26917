"""Running exported tests as a team would, without preview-qa: a folder of pytest-playwright tests with pytest, a folder
of @playwright/test specs with `npx playwright test` (where Node and a local @playwright/test are there). Both drive
Debian's Chromium."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.conftest import clean_env

# The test project's own pytest set-up, never the exported file: Playwright drives Debian's Chromium.
CONFTEST = """import pytest


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    return {**browser_type_launch_args, "executable_path": "/usr/bin/chromium", "args": ["--no-sandbox"]}
"""


def pytest_run(folder: Path, base_url: str, **env: str) -> subprocess.CompletedProcess[str]:
    """pytest-playwright on every test file of `folder` (which needs CONFTEST), against `base_url`."""
    (folder / "conftest.py").write_text(CONFTEST, encoding="utf-8")
    pytest = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--rootdir", str(folder)]
    return subprocess.run(
        [*pytest, "--base-url", base_url, str(folder)],
        cwd=folder,
        env={**clean_env(), **env},
        capture_output=True,
        text=True,
        timeout=300,
    )


def playwright_test() -> Path | None:
    """A local @playwright/test, from PREVIEW_QA_PLAYWRIGHT_TEST_DIR (a folder whose node_modules holds it)."""
    folder = os.environ.get("PREVIEW_QA_PLAYWRIGHT_TEST_DIR")
    if not shutil.which("npx") or not folder or not (Path(folder) / "node_modules" / "@playwright" / "test").is_dir():
        return None
    return Path(folder)


NO_PLAYWRIGHT_TEST = "needs npx and a folder with @playwright/test installed, named by PREVIEW_QA_PLAYWRIGHT_TEST_DIR"


def npx_run(project: Path, specs: Path, base_url: str, **env: str) -> subprocess.CompletedProcess[str]:
    """`npx playwright test` on the specs in `specs`, copied into a folder of their own in `project` (playwright_test())
    so that no other test's specs run with them, against `base_url`."""
    with tempfile.TemporaryDirectory(dir=project, prefix="specs-") as folder:
        for spec in specs.glob("*.spec.ts"):
            shutil.copy(spec, folder)
        config = Path(folder) / "playwright.config.ts"
        config.write_text(
            "import { defineConfig } from '@playwright/test';\nexport default defineConfig({ testDir: '.', "
            f"use: {{ baseURL: '{base_url}', launchOptions: {{ executablePath: '/usr/bin/chromium' }} }} }});\n",
            encoding="utf-8",
        )
        return subprocess.run(
            ["npx", "playwright", "test", "--reporter=line", "--config", str(config)],
            cwd=project,
            capture_output=True,
            text=True,
            timeout=300,
            env={**clean_env(), **env},
        )
