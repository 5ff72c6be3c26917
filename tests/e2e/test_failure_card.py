"""The demo's failure as a reviewer sees it on GitHub: the PR comment rendered by cmark-gfm, styled with GitHub's own
stylesheet (github-markdown-css), in Chromium 900 px wide: no scrollbar, each fact once, no JSON, repr or index."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from preview_qa.agent.browsers.chromium import find_chromium
from tests.conftest import CliRun
from tests.fakes.github import rendered, visible

CSS_VARIABLE = "GITHUB_MARKDOWN_CSS"  # github-markdown-light.css from npm's github-markdown-css (.ci/run installs it)
SHOT_VARIABLE = "PREVIEW_QA_CARD_SCREENSHOT"  # where to keep the screenshot, for a look by a person
WIDTH = 900
# The wrapper github-markdown-css's README gives; GitHub's comment column is narrower than the 900 px page.
PAGE = """<!doctype html><html><head><meta charset="utf-8"><style>{css}</style><style>
.markdown-body {{ box-sizing: border-box; min-width: 200px; max-width: 980px; margin: 0 auto; padding: 45px; }}
</style></head><body><article class="markdown-body">{body}</article></body></html>"""


@pytest.fixture(scope="session")  # the demo_run's scope: so that it is asked first, and a skip spares the demo run
def css() -> str:
    path = os.environ.get(CSS_VARIABLE, "")
    if not path or not Path(path).is_file():
        pytest.skip(
            f"GitHub's stylesheet is not installed: run `npm install --prefix DIR github-markdown-css` and set "
            f"{CSS_VARIABLE}=DIR/node_modules/github-markdown-css/github-markdown-light.css (.ci/run does)"
        )
    return Path(path).read_text(encoding="utf-8")


def card_of(comment: str) -> str:
    """The failure card of the demo's failing test, as GitHub shows it (its raw HTML kept)."""
    return rendered(comment.split("#### Failures", 1)[1], raw_html=True)


def look(html_page: str, shot: Path) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=find_chromium(None, os.environ))
        try:
            page = browser.new_page(viewport={"width": WIDTH, "height": 800})
            page.set_content(html_page)
            page.screenshot(path=str(shot), full_page=True)
            found: dict[str, Any] = page.evaluate("""() => {
                const root = document.scrollingElement;
                const wide = [...document.querySelectorAll('.markdown-body *')]
                    .filter(e => e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflowX !== 'visible')
                    .map(e => e.tagName + ': ' + e.textContent.slice(0, 60));
                return {scrollWidth: root.scrollWidth, clientWidth: root.clientWidth, wide,
                        steps: [...document.querySelectorAll('.markdown-body ol > li')].map(e => e.textContent)};
            }""")
            return found
        finally:
            browser.close()


def test_the_demos_failure_card_fits_900_px_says_each_fact_once_and_shows_no_json(
    css: str, demo_run: CliRun, tmp_path: Path
) -> None:
    demo = demo_run  # after css: no demo run when the stylesheet is missing and the test skips
    assert demo.exit_code == 0, demo.stderr[-2000:]
    comment = (demo.out / "comment.md").read_text(encoding="utf-8")
    card = card_of(comment)
    shot = tmp_path / "card.png"
    seen = look(PAGE.format(css=css, body=rendered(comment, raw_html=True)), shot)
    if os.environ.get(SHOT_VARIABLE):
        shutil.copy(shot, os.environ[SHOT_VARIABLE])

    assert seen["scrollWidth"] <= seen["clientWidth"] == WIDTH, seen  # no horizontal scrollbar on the page ...
    assert seen["wide"] == [], seen["wide"]  # ... nor inside it (a table that scrolls, a code block)
    assert "<pre" not in card  # prose wraps: no fenced block

    text = visible(card)
    checkout = next(t for t in demo.results["tests"] if t["name"] == "Checkout page works")
    facts = [
        checkout["reason"],
        "Payment confirmed",
        checkout["evidence"]["first_page_error"],
        checkout["evidence"]["first_failed_request"],
        checkout["evidence"]["first_console_error"],
        "Reported: fail",
        "step-03.png",
    ]
    assert {fact: text.count(fact) for fact in facts} == dict.fromkeys(facts, 1), text
    assert "expectation text failed" not in text  # the table says it, not a sentence besides
    assert "and 2 more in events.jsonl" in text  # 2 page errors + 2 console errors + 1 failed request, 3 shown
    assert seen["steps"] == ["Clicked button 'Pay now' → /broken", "Waited 1 s", "❌ Reported: fail"]
    for raw in ('{"', "{'", "'status':", '"success"', "files_to_display", "index", "Agent's own verdict"):
        assert raw not in text, raw  # no action JSON, Python repr or element index
    assert re.search(r"Open tests/checkout-page-works-[0-9a-f]{8}/ in the run's artifacts", text)
