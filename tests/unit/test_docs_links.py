"""The docs hold together: every relative link in README.md, CONTRIBUTING.md and docs/ reaches a file and a heading
that exist (anchors as GitHub makes them), and the README stays short and starts with the set-up commands."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").rglob("*.md"))]
SET_UP = ["scripts/install.sh --venv .venv --extras test && .venv/bin/preview-qa demo", ".venv/bin/python -m pytest"]

FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.S | re.M)
INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1")
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$", re.M)
EXPLICIT_ANCHOR = re.compile(r"<a\s+(?:name|id)=\"([^\"]+)\"")


def prose(text: str) -> str:
    """The text outside code blocks and code spans, where a link is a link."""
    return INLINE_CODE.sub("", FENCE.sub("", text))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: its rendered text lower-cased, punctuation dropped, spaces turned into '-'."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link shows its text only
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML is not text
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every anchor a page has: its headings' slugs, numbered on repeats as GitHub numbers them, and explicit ones."""
    text = path.read_text(encoding="utf-8")
    found: set[str] = set(EXPLICIT_ANCHOR.findall(text))
    seen: dict[str, int] = {}
    for _, heading in HEADING.findall(FENCE.sub("", text)):
        base = slug(heading)
        n = seen.get(base, 0)
        found.add(base if n == 0 else f"{base}-{n}")
        seen[base] = n + 1
    return found


def relative_links(path: Path) -> list[str]:
    return [
        t for t in LINK.findall(prose(path.read_text(encoding="utf-8"))) if t and not re.match(r"^[a-z][a-z0-9+.-]*:", t, re.I)
    ]


def test_the_anchor_slugs_are_githubs() -> None:
    assert slug("Log in once: `save_state` and `use_state`") == "log-in-once-save_state-and-use_state"
    assert slug("What passes, what fails, what errors") == "what-passes-what-fails-what-errors"
    assert slug("A real app: Django admin") == "a-real-app-django-admin"
    assert slug("The image, the lock, and how CI tests them") == "the-image-the-lock-and-how-ci-tests-them"
    assert slug("See [the guide](x.md) — now") == "see-the-guide--now"


def test_the_checker_finds_what_is_broken(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# Title\n\n## Same\n\n## Same\n", encoding="utf-8")
    assert anchors(tmp_path / "a.md") == {"title", "same", "same-1"}
    page = tmp_path / "b.md"
    page.write_text(
        "[ok](a.md#same-1) [web](https://x.y/z) `[code](nope.md)`\n```\n[fenced](nope.md)\n```\n"
        '[gone](missing.md) [bad anchor](a.md#nowhere) ![img](pic.png "title")\n',
        encoding="utf-8",
    )
    assert relative_links(page) == ["a.md#same-1", "missing.md", "a.md#nowhere", "pic.png"]


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_reaches_a_file_and_a_heading(doc: Path) -> None:
    broken = []
    for target in relative_links(doc):
        file_part, _, anchor = target.partition("#")
        dest = (doc.parent / unquote(file_part)).resolve() if file_part else doc
        if not dest.exists():
            broken.append(f"{target}: no such file")
        elif anchor and (dest.is_dir() or unquote(anchor).lower() not in anchors(dest)):
            broken.append(f"{target}: no heading with this anchor")
    assert broken == []


def test_the_docs_exist_and_the_readme_links_every_guide() -> None:
    names = {p.relative_to(ROOT).as_posix() for p in DOCS}
    assert {
        "docs/manifest.md",
        "docs/selection.md",
        "docs/saved-logins.md",
        "docs/verdicts.md",
        "docs/flaky-and-regressions.md",
        "docs/providers.md",
        "docs/results.md",
        "docs/github-actions.md",
        "docs/performance.md",
        "docs/security.md",
        "docs/dev/architecture.md",
        "docs/dev/promises.md",
        "docs/dev/image-and-lock.md",
        "docs/dev/dependencies.md",
        "CONTRIBUTING.md",
    } <= names
    linked = {t.partition("#")[0] for t in relative_links(ROOT / "README.md")}
    guides = {p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").glob("*.md")}
    assert guides <= linked


def test_the_readme_is_short_and_starts_with_the_two_set_up_commands() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250
    first = FENCE.search(text)
    assert first is not None
    lines = first.group(0).splitlines()[1:-1]
    assert [line.split(" #")[0].strip() for line in lines] == SET_UP
