"""The layering holds where it matters to a user: the verdict, runner, manifest, results and reporters load without
browser-use (only preview_qa.agent imports it), and the CLI starts without it."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import pytest

import preview_qa.engine
import preview_qa.manifest
import preview_qa.reporters
import preview_qa.secrets
import preview_qa.selection
import preview_qa.verdict

PACKAGES = [preview_qa.verdict, preview_qa.engine, preview_qa.manifest, preview_qa.selection, preview_qa.secrets,
            preview_qa.reporters]
WITHOUT_BROWSER_USE = ["preview_qa.results", "preview_qa.events", "preview_qa.app", "preview_qa.cli",
                       *(p.__name__ for p in PACKAGES),
                       *(m.name for p in PACKAGES for m in pkgutil.walk_packages(p.__path__, f"{p.__name__}."))]
LOADED = ("import sys, importlib; importlib.import_module(sys.argv[1]); "
          "print(sorted(m for m in sys.modules if m.split('.')[0] == 'browser_use' or m.startswith('preview_qa.agent')))")


def loaded_by(module: str) -> str:
    proc = subprocess.run([sys.executable, "-c", LOADED, module], capture_output=True, text=True, check=True, timeout=120)
    return proc.stdout.strip()


@pytest.mark.parametrize("module", WITHOUT_BROWSER_USE)
def test_importing_does_not_load_browser_use_or_the_agent(module: str) -> None:
    assert loaded_by(module) == "[]"


def test_the_agent_package_does_load_browser_use() -> None:
    """The check above can fail: the one package allowed to import browser-use shows up in the same probe."""
    assert "'browser_use'" in loaded_by("preview_qa.agent.session")
