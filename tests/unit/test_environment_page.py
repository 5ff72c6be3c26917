"""docs/environment.md names every PREVIEW_QA_* variable the code and the action read, and none they do not."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
VARIABLE = re.compile(r"PREVIEW_QA_[A-Z0-9_]*[A-Z0-9]")


def test_the_environment_page_names_every_variable_read_and_no_other() -> None:
    sources = [*sorted((ROOT / "src").rglob("*.py")), ROOT / "action.yml", *sorted((ROOT / "scripts").glob("*.sh"))]
    read = {name for path in sources for name in VARIABLE.findall(path.read_text(encoding="utf-8"))}
    page = (ROOT / "docs" / "environment.md").read_text(encoding="utf-8")
    rows = set(re.findall(r"^\| `(PREVIEW_QA_[A-Z0-9_]+)` \|", page, flags=re.MULTILINE))
    assert read and rows == read, f"only in the code: {sorted(read - rows)}; only on the page: {sorted(rows - read)}"
