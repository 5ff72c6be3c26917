"""`run --impacted`: the tests a change touches. A test without `paths` runs when a changed file maps to a route whose
pattern matches a page its last passing recording visited; every test runs when a changed file maps to no route; a
test with no recording runs. Also which changed routes no test starts on or visits (`plan` can draft them)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from preview_qa.config import RunConfig
from preview_qa.manifest.models import TestSpec
from preview_qa.selection.previews import Previews
from preview_qa.selection.repository import Repository
from preview_qa.selection.route import Route
from preview_qa.selection.routes import map_files

Visited = Callable[[TestSpec], list[str] | None]  # the paths its last passing recording visited; None: no recording
SHOWN = 5  # pages or routes named in a reason, at most


@dataclass(frozen=True)
class Impact:
    """The tests the change does not touch (name -> why), what the run should say, and the changed routes no test
    covers."""

    skipped: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    untested: list[Route] = field(default_factory=list)
    mapped: int = 0  # the routes the change maps to, covered or not


def impact(
    tests: list[TestSpec],
    changed: list[str],
    routes: Mapping[str, list[str]],
    visited: Visited | None,
    config: RunConfig,
    repo: Repository | None = None,
) -> Impact:
    """Which of `tests` the change leaves out, and why (only those without paths: paths decide for the others);
    `visited` None (--no-cache) reads no recording, so every test runs. A test is touched by a route of its own
    preview (or of an app with none: who knows which preview serves it)."""
    mapped = map_files(changed, routes, repo)
    touched = mapped.routes
    previews = Previews(config, touched)
    untested = [r for r in touched if covered_by(r, tests, visited or (lambda _t: None), previews) is None]
    notes = list(mapped.notes)
    if mapped.unmapped:
        notes.append(f"--impacted: changed files that map to no route ({_some(mapped.unmapped)}): every test runs")
        return Impact({}, notes, untested, len(touched))
    if visited is None:
        notes.append("--impacted with --no-cache: no recording is read, so every test runs")
        return Impact({}, notes, untested, len(touched))
    skipped, unrecorded = {}, []
    for test in (t for t in tests if not t.paths):
        pages = visited(test)
        if pages is None:
            unrecorded.append(test.name)
        elif not any(route.serves(page) for route in touched if _may_be_on(test, route, previews) for page in pages):
            change = f"the change touches {_some([r.shown for r in touched])}" if touched else "the change touches no page"
            skipped[test.name] = f"not impacted: it visits {_some(pages) or 'no page of the preview'}; {change}"
    if unrecorded:
        notes.append(
            f"--impacted: no passing recording of {_some(unrecorded)}: it runs (a recording says which pages a test visits)"
        )
    return Impact(skipped, notes, untested, len(touched))


def covered_by(route: Route, tests: list[TestSpec], visited: Visited, previews: Previews) -> str | None:
    """The first test that covers `route`, and how, in words: it starts there (on the route's preview), or its
    recording passed through it; None when none does."""
    on = [test for test in tests if previews.same(test, route)]
    for test in on:
        start = urlsplit(test.start).path or "/"
        if route.serves(start):
            return f"test '{test.name}' starts there" if start == route.label else f"test '{test.name}' starts on {start}"
    for test in on:
        if any(route.serves(page) for page in visited(test) or []):
            return f"a recorded run of test '{test.name}' passed through it"
    return None


def _may_be_on(test: TestSpec, route: Route, previews: Previews) -> bool:
    """Whether the test may run on the route's preview: it does, or the route's app has no preview to tell."""
    return previews.of_route(route) is None or previews.same(test, route)


def _some(items: list[str]) -> str:
    more = f" and {len(items) - SHOWN} more" if len(items) > SHOWN else ""
    return ", ".join(items[:SHOWN]) + more
