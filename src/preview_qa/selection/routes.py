"""Changed files -> the routes they serve: the manifest's `routes:` globs first, then common frameworks' conventions
(Next.js app/ and pages/, SvelteKit, Remix, Nuxt, Django urls.py); the files that map to nothing are named."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pathspec import GitIgnoreSpec

SCRIPTS = "tsx|ts|jsx|js|mdx"
SCRIPT = rf"(?:{SCRIPTS})"
_NEXT_APP = re.compile(rf"^(?:src/)?app/(?:(.*)/)?(?:page|layout|template|loading|error)\.{SCRIPT}$")
_PAGES = re.compile(rf"^(?:src/)?pages/(.*)\.(?:{SCRIPTS}|vue)$")  # Next.js pages/ and Nuxt pages/
_SVELTEKIT = re.compile(r"^src/routes/(?:(.*)/)?\+(?:page|layout)(?:\.server)?\.(?:svelte|ts|js)$")
_REMIX = re.compile(rf"^app/routes/([^/]+?)(?:/route)?\.{SCRIPT}$")
_DJANGO_PATH = re.compile(r"""\bpath\(\s*r?["']([^"']*)["']""")
_DJANGO_PARAM = re.compile(r"<(?:\w+:)?(\w+)>")
_DYNAMIC = re.compile(r"\[\[?(\.\.\.)?[^\]/]+\]\]?")
_PAGES_NOT_ROUTES = ("api/", "_app", "_document", "_error", "_middleware")


@dataclass(frozen=True)
class Route:
    """A route of the app, as the framework writes it (`/blog/[slug]`), and the changed files behind it."""

    path: str
    files: tuple[str, ...] = ()

    @property
    def dynamic(self) -> bool:
        """It has a segment that takes a value (`[slug]`, `[...rest]`): a URL needs one found on the preview."""
        return bool(_DYNAMIC.search(self.path))

    @property
    def static_prefix(self) -> str:
        """The route up to its first dynamic segment: where a link to one of its pages is looked for."""
        return self.path.split("[", 1)[0].rstrip("/") or "/"

    def matches(self, url_path: str) -> bool:
        """Whether a URL's path is a page of this route (a dynamic segment takes any value)."""
        return bool(self.pattern().fullmatch(url_path.rstrip("/") or "/"))

    def pattern(self) -> re.Pattern[str]:
        parts, last = [], 0
        for m in _DYNAMIC.finditer(self.path):
            parts += [re.escape(self.path[last : m.start()]), ".*" if m.group(1) else "[^/]+"]
            last = m.end()
        return re.compile("".join([*parts, re.escape(self.path[last:])]))


@dataclass(frozen=True)
class RouteMap:
    """The routes the changed files map to (in first-seen order) and the files that map to none."""

    routes: list[Route] = field(default_factory=list)
    unmapped: list[str] = field(default_factory=list)


def map_files(
    files: list[str], manifest_routes: Mapping[str, list[str]], read: Callable[[str], str | None] | None = None
) -> RouteMap:
    """Each changed file's routes: a manifest `routes:` glob that matches it wins over every convention; `read` gives a
    file's text (a Django urls.py is read for its paths), by default from the working directory."""
    specs = [(GitIgnoreSpec.from_lines([glob]), routes) for glob, routes in manifest_routes.items()]
    found: dict[str, list[str]] = {}
    unmapped = []
    for file in files:
        given = [r for spec, routes in specs if spec.match_file(file) for r in routes]
        routes = given or convention_routes(file, read or _read_here)
        for route in routes:
            found.setdefault(_normal(route), []).append(file)
        if not routes:
            unmapped.append(file)
    return RouteMap([Route(path, tuple(dict.fromkeys(fs))) for path, fs in found.items()], unmapped)


def convention_routes(file: str, read: Callable[[str], str | None]) -> list[str]:
    """The routes a framework's file layout gives a file, or none."""
    if m := _NEXT_APP.match(file):
        return [_segments(m.group(1) or "")]
    if m := _SVELTEKIT.match(file):
        return [_segments(m.group(1) or "")]
    if m := _REMIX.match(file):
        return _remix(m.group(1))
    if (m := _PAGES.match(file)) and not m.group(1).startswith(_PAGES_NOT_ROUTES):
        return [_segments(re.sub(r"(^|/)index$", "", m.group(1)))]
    if file == "urls.py" or file.endswith("/urls.py"):
        return [_segments(_DJANGO_PARAM.sub(r"[\1]", p)) for p in _DJANGO_PATH.findall(read(file) or "")]
    return []


def _segments(path: str) -> str:
    """A folder path as a URL path: route groups `(group)`, parallel slots `@slot` and private `_folders` leave no
    segment in the URL."""
    kept = [s for s in path.split("/") if s and not (s.startswith("(") and s.endswith(")")) and not s.startswith(("@", "_"))]
    return "/" + "/".join(kept)


def _remix(name: str) -> list[str]:
    """Remix's flat routes: dots are slashes, `$param` a dynamic segment, a lone `$` the rest of the path, `_index`
    the parent, a leading `_` a layout without a segment, a trailing `_` only unnests."""
    segments = []
    for part in name.split("."):
        if part == "_index" or (part.startswith("_") and part != "_"):
            continue
        part = part.rstrip("_")
        segments.append("[...rest]" if part == "$" else f"[{part[1:]}]" if part.startswith("$") else part)
    return [_segments("/".join(segments))]


def _normal(route: str) -> str:
    return "/" + route.strip().strip("/")


def _read_here(file: str) -> str | None:
    try:
        return Path(file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
