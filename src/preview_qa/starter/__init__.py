"""What `preview-qa init` writes: a commented starter manifest and the pull request workflow that runs it."""

from __future__ import annotations

from importlib.resources import files

# Where each file goes in the repository -> its template in this package.
TEMPLATES = {"qa.yml": "qa.yml", ".github/workflows/preview-qa.yml": "preview-qa.yml"}


def starter_files() -> dict[str, str]:
    """Repository path -> the text to write there."""
    return {target: files(__name__).joinpath(name).read_text(encoding="utf-8") for target, name in TEMPLATES.items()}
