"""The job summary's and PR comment's lines for expect.visual: the tests that look different from the default branch,
each with its first diff image, linked to the run's artifacts (GitHub's comments cannot show our files)."""

from __future__ import annotations

from preview_qa.reporters.github.markdown import md_cell
from preview_qa.results import RunResult

LISTED = 20  # changed tests named; the rest are counted (results.json has them all)


def changed_markdown(run: RunResult, run_url: str | None) -> str:
    """A section naming each changed test, why, and its first diff image; "" when none changed."""
    if not run.changed:
        return ""
    lines = ["\n#### 🖼️ Looks different from the default branch (expect.visual)\n"]
    for test in run.changed[:LISTED]:
        diff = next((v.diff for v in test.visual if v.over and v.diff), None)
        # The path is our own slug (letters, digits, dashes, slashes): safe in a code span.
        image = f" · diff: `{diff}`" if diff else ""
        linked = f" in [the run's artifacts]({run_url}#artifacts)" if diff and run_url else ""
        lines.append(f"- **{md_cell(test.name, 120)}**: {md_cell(test.changed or '')}{image}{linked}")
    more = len(run.changed) - LISTED
    lines += [f"- and {more} more in results.json"] if more > 0 else []
    lines.append(
        "\n_Not blocking unless `--fail-on visual`: merging accepts it (the default branch's screenshots become the "
        "reference), or `--accept-visual NAME` for this pull request._\n"
    )
    return "\n".join(lines)
