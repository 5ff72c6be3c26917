"""The repository as the tests see it: its root, the demo's folder, the manifest's JSON Schema file, the JUnit schema
that junit.xml must meet (tests/data/junit.xsd), and the linters of the test extra."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
import xmlschema

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "src" / "preview_qa" / "demo"  # the fixture site, its manifest and its scripted agent
SCHEMA_FILE = ROOT / "schema" / "manifest-v1.json"
JUNIT_SCHEMA = xmlschema.XMLSchema(ROOT / "tests" / "data" / "junit.xsd")


def tool(name: str) -> str:
    """A linter from the test extra: beside this Python (a venv's bin) or on PATH."""
    found = next((str(p) for p in [Path(sys.executable).parent / name] if p.exists()), None) or shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed; install the test extra (pip install -e '.[test]').")
    return found
