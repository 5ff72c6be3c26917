"""A small model that asks to open its placeholder ('url_value') is told so in the test's causes: browser-use refuses
the navigation, and the cause was "a navigation to  was blocked:  is not one of the test's allowed hosts (add it to
`allowed_domains`)", a blank host and a wrong fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import scripted_run
from tests.site import DemoSite

pytestmark = pytest.mark.e2e

MANIFEST = """
version: 1
defaults: {max_steps: 3, timeout: 60}
tests:
  - name: orders
    task: "[nav] Open the orders page."
"""
SCENARIOS = [
    {
        "match": "[nav]",
        "turns": [{"actions": [{"navigate": {"url": "url_value"}}]}, {"done": {"status": "fail", "reason": "No."}}],
    }
]


def test_a_navigation_to_what_is_no_url_says_so(tmp_path: Path, site: DemoSite) -> None:
    with scripted_run(tmp_path, site, MANIFEST, SCENARIOS, "--no-cache") as run:
        t = run.test("orders")
    assert t["status"] == "failed", t
    assert "the agent asked to open 'url_value' after the navigate action, which is not a URL: nothing was loaded" in t["causes"]
    assert not any("allowed_domains" in cause for cause in t["causes"]), t["causes"]
