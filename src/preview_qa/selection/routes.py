"""Changed files -> the routes they serve: the manifest's `routes:` globs first, then the conventions of the framework of
the app each file is in (selection/apps.py, selection/conventions.py); the files that map to nothing are named."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field

from preview_qa.selection.conventions import Conventions
from preview_qa.selection.repository import DiskRepository, Repository
from preview_qa.selection.route import Route


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
    from pathspec import GitIgnoreSpec  # only a run given changed files: not on every run's start

    specs = [(GitIgnoreSpec.from_lines([glob]), routes) for glob, routes in manifest_routes.items()]
    conventions = Conventions(repo if repo is not None else DiskRepository())
    found: dict[Route, list[str]] = {}  # a route (its app, path and reach) -> the files behind it
    unmapped, no_page = [], []
    for file in files:
        matched = [routes for spec, routes in specs if spec.match_file(file)]
        given = [Route(_normal(r)) for routes in matched for r in routes]
        routes = given if matched else conventions.routes(file)
        for route in routes:
            found.setdefault(route, []).append(file)
        if matched and not given:
            no_page.append(file)
        elif not routes:
            unmapped.append(file)
    mapped = [dataclasses.replace(route, files=tuple(dict.fromkeys(fs))) for route, fs in found.items()]
    return RouteMap(mapped, unmapped, no_page, conventions.notes)


def _normal(route: str) -> str:
    return "/" + route.strip().strip("/")
