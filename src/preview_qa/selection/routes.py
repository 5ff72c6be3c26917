"""Changed files -> the routes they serve: the manifest's `routes:` globs first, then the conventions of the framework of
the app each file is in (selection/apps.py, selection/conventions.py); the files that map to nothing are named."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property

from pathspec import GitIgnoreSpec

from preview_qa.selection.repository import DiskRepository, Repository

_BRACKETS = re.compile(r"\[\[?(\.\.\.)?[^\]/]+\]\]?")
_SEGMENT_PARAM = re.compile(r"\[(\.\.\.)?[^\]/]+\]")


@dataclass(frozen=True)
class Route:
    """A route of the app, written as the frameworks write it (`/blog/[slug]`, `/docs/[...path]`, `/[[lang]]/about`),
    and the changed files behind it. `under`: this route and every route under it (what a layout maps to)."""

    path: str
    files: tuple[str, ...] = ()
    under: bool = False

    @property
    def label(self) -> str:
        """The route as shown: `/blog/**` for a layout's."""
        return (self.path.rstrip("/") + "/**") if self.under else self.path

    @property
    def dynamic(self) -> bool:
        """It has a segment that needs a value (`[slug]`, `[...rest]`): a URL needs one found on the preview. An optional
        one (`[[lang]]`) matches without a value."""
        return any(_SEGMENT_PARAM.search(s) and not _optional(s) for s in _parts(self.path))

    @property
    def static_prefix(self) -> str:
        """The route up to its first dynamic segment: the first page where a link to one of its pages is looked for."""
        kept = []
        for segment in _parts(self.path):
            if _BRACKETS.search(segment):
                break
            kept.append(segment)
        return "/" + "/".join(kept)

    @property
    def plain(self) -> str:
        """The route's URL without its optional segments (`/[[lang]]/about` -> `/about`); for a route that needs none."""
        return "/" + "/".join(s for s in _parts(self.path) if not _optional(s))

    def matches(self, url_path: str) -> bool:
        """Whether a URL's path is a page of this route (a dynamic segment takes any value; a layout's, any page under it)."""
        return bool(self._pattern.fullmatch(url_path.rstrip("/")))

    @cached_property
    def _pattern(self) -> re.Pattern[str]:
        parts = []
        for segment in _parts(self.path):
            if _optional(segment):
                parts.append("(?:/.*)?" if "..." in segment else "(?:/[^/]+)?")
            else:
                parts.append("/" + _segment_pattern(segment))
        return re.compile("".join(parts) + ("(?:/.*)?" if self.under else ""))


def _parts(path: str) -> list[str]:
    return [s for s in path.split("/") if s]


def _optional(segment: str) -> bool:
    return segment.startswith("[[") and segment.endswith("]]")


def _segment_pattern(segment: str) -> str:
    out, last = [], 0
    for m in _SEGMENT_PARAM.finditer(segment):
        out += [re.escape(segment[last : m.start()]), ".+" if m.group(1) else "[^/]+"]
        last = m.end()
    return "".join([*out, re.escape(segment[last:])])


@dataclass(frozen=True)
class RouteMap:
    """The routes the changed files map to (in first-seen order); the files that map to none; those the manifest's
    `routes:` maps to an empty list (they touch no page); and what could not be read, in words."""

    routes: list[Route] = field(default_factory=list)
    unmapped: list[str] = field(default_factory=list)
    no_page: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def map_files(files: list[str], manifest_routes: Mapping[str, list[str]], repo: Repository | None = None) -> RouteMap:
    """Each changed file's routes: a manifest `routes:` glob that matches it wins over every convention (an empty list:
    it touches no page); else its app's framework's conventions, read from `repo` (by default the checkout here)."""
    from preview_qa.selection.conventions import Conventions

    specs = [(GitIgnoreSpec.from_lines([glob]), routes) for glob, routes in manifest_routes.items()]
    conventions = Conventions(repo if repo is not None else DiskRepository())
    found: dict[tuple[str, bool], list[str]] = {}
    unmapped, no_page = [], []
    for file in files:
        matched = [routes for spec, routes in specs if spec.match_file(file)]
        given = [Route(_normal(r)) for routes in matched for r in routes]
        routes = given if matched else conventions.routes(file)
        for route in routes:
            found.setdefault((route.path, route.under), []).append(file)
        if matched and not given:
            no_page.append(file)
        elif not routes:
            unmapped.append(file)
    mapped = [Route(path, tuple(dict.fromkeys(fs)), under) for (path, under), fs in found.items()]
    return RouteMap(mapped, unmapped, no_page, conventions.notes)


def _normal(route: str) -> str:
    return "/" + route.strip().strip("/")
