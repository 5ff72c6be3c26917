"""A route of an app as the frameworks write it (`/blog/[slug]`, `/docs/[...path]`, `/[[lang]]/about`), and the pages
(URL paths) it serves."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property

_BRACKETS = re.compile(r"\[\[?(\.\.\.)?[^\]/]+\]\]?")
_SEGMENT_PARAM = re.compile(r"\[(\.\.\.)?[^\]/]+\]")


@dataclass(frozen=True)
class Route:
    """A route of an app, written as the frameworks write it (`/blog/[slug]`, `/docs/[...path]`, `/[[lang]]/about`),
    and the changed files behind it. `under`: this route and every route under it (what a layout maps to). `app`: the
    folder of the monorepo's app it is a route of ('' for the repository's root, or a route the manifest gives).
    `others`: the app's other routes, which serve a page before this one when they are more specific (`/about` before
    `/[...slug]`)."""

    path: str
    files: tuple[str, ...] = ()
    under: bool = False
    app: str = ""
    others: tuple[str, ...] = field(default=(), compare=False)

    @property
    def label(self) -> str:
        """The route as shown: `/blog/**` for a layout's."""
        return (self.path.rstrip("/") + "/**") if self.under else self.path

    @property
    def shown(self) -> str:
        """The route as shown, with its app in a monorepo: `/about (apps/web)`."""
        return f"{self.label} ({self.app})" if self.app else self.label

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
        """The route's URL without its optional segments (`/[[lang]]/about` -> `/about`); for a route that needs none. A
        trailing slash stays (`/admin/password_change/`): Django redirects without it, a strict app answers 404."""
        plain = "/" + "/".join(s for s in _parts(self.path) if not _optional(s))
        return plain + "/" if self.path.endswith("/") and plain != "/" else plain

    def matches(self, url_path: str) -> bool:
        """Whether a URL's path is a page of this route (a dynamic segment takes any value; a layout's, any page under it)."""
        return bool(self._pattern.fullmatch(url_path.rstrip("/")))

    def serves(self, url_path: str) -> bool:
        """Whether this route renders the page at `url_path`: it matches, and none of the app's more specific routes
        does (a static segment wins over a dynamic one, a dynamic one over a catch-all, as every framework ranks them)."""
        mine = _rank(self.path)
        return self.matches(url_path) and not any(
            _rank(other) < mine and Route(other).matches(url_path) for other in self.others if other != self.path
        )

    @cached_property
    def _pattern(self) -> re.Pattern[str]:
        parts = []
        for segment in _parts(self.path):
            if _optional(segment):
                parts.append("(?:/.*)?" if "..." in segment else "(?:/[^/]+)?")
            else:
                parts.append("/" + _segment_pattern(segment))
        return re.compile("".join(parts) + ("(?:/.*)?" if self.under else ""))


def _rank(path: str) -> tuple[int, ...]:
    """How specific a route is, segment by segment (lower wins): static 0, dynamic 1, optional 2, catch-all 3,
    optional catch-all 4."""
    ranks = []
    for segment in _parts(path):
        catch_all = "[..." in segment or "[[..." in segment
        if _optional(segment):
            ranks.append(4 if catch_all else 2)
        elif _SEGMENT_PARAM.search(segment):
            ranks.append(3 if catch_all else 1)
        else:
            ranks.append(0)
    return tuple(ranks)


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
