"""The fixture site for bench/'s scripts: the e2e tests' own (tests/site/), imported from the checkout's root."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.site import APP_PAGES, DemoSite
from tests.site.todo import todo_turns

__all__ = ["APP_PAGES", "DemoSite", "todo_turns"]
