"""React Router 7's route config (`app/routes.ts`) read without running it: `index`, `route`, `layout`, `prefix`, nested
children, `flatRoutes()`, and constants of the same file. What cannot be read so (a spread of an imported array, a
function of our own) is named in a note, and the files it would have named map to no route.

A small reader of our own rather than a TypeScript parser: React Router's config is a literal array of calls to its
four helpers, so reading it needs only a tokenizer (strings, comments, templates) and a reader of calls and arrays;
a full parser (tree-sitter's, the only maintained one on PyPI) would bring two native wheels to the lock and the image,
and the same walk over its tree would still be ours to write."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from preview_qa.selection.route import Route

_TOKEN = re.compile(
    r"""(?P<space>\s+)|(?P<comment>//[^\n]*|/\*.*?\*/)|(?P<str>"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')"""
    r"""|(?P<template>`(?:\\.|[^`\\])*`)|(?P<name>[A-Za-z_$][\w$]*)|(?P<spread>\.\.\.)|(?P<num>\d[\w.]*)|(?P<punct>.)""",
    re.S,
)
HELPERS = ("index", "route", "layout", "prefix")
_CLOSE = {"(": ")", "[": "]", "{": "}"}


@dataclass(frozen=True)
class _Tok:
    kind: str
    text: str
    line: int


@dataclass
class _Entry:
    """One route object as React Router's helpers return it."""

    file: str
    path: str | None  # None: a layout (no segment); "" with index: its parent's
    index: bool = False
    children: list[_Entry] = field(default_factory=list)


class Unreadable(Exception):
    """A part of the config that cannot be read without running it."""


@dataclass
class RouteConfig:
    """What app/routes.ts says: each file's routes, where flatRoutes() reads files (relative to the app folder), and
    what could not be read."""

    files: dict[str, list[Route]] = field(default_factory=dict)
    flat_routes: str | None = None
    notes: list[str] = field(default_factory=list)

    def routes_of(self, file: str) -> list[Route] | None:
        """The routes of a file (its path in the app folder), or None when the config names it nowhere."""
        return self.files.get(_file(file))


def read_route_config(text: str | None, where: str) -> RouteConfig:
    """`text` of `where` (app/routes.ts) as a RouteConfig; never raises: what it cannot read becomes a note."""
    config = RouteConfig()
    if text is None:
        config.notes.append(f"{where} is not there: a React Router app declares its routes in it")
        return config
    reader = _Reader(_tokens(text), where, config)
    try:
        entries = reader.default_export()
    except Unreadable as e:
        config.notes.append(_note(where, e))
        return config
    _collect(entries, "/", config.files)
    return config


def _note(where: str, problem: Unreadable) -> str:
    return f"{where}: {problem}: the routes it adds are not known (give them with the manifest's routes:)"


def _tokens(text: str) -> list[_Tok]:
    found, line = [], 1
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup or "punct"
        if kind not in ("space", "comment"):
            found.append(_Tok(kind, m.group(), line))
        line += m.group().count("\n")
    return found


class _Reader:
    """A recursive reader of the default export's expression."""

    def __init__(self, tokens: list[_Tok], where: str, config: RouteConfig):
        self.t, self.where, self.config = tokens, where, config
        self.imports: dict[str, str] = {}  # local name -> the module it is imported from
        self.helpers: dict[str, str] = {}  # local name -> React Router's helper (or flatRoutes)
        self.consts: dict[str, int] = {}  # top-level const/let/var name -> the index of its value's first token
        self._reading: set[str] = set()
        self._scan()

    def _scan(self) -> None:
        depth = 0
        for i, tok in enumerate(self.t):
            if tok.kind == "punct" and tok.text in "([{":
                depth += 1
            elif tok.kind == "punct" and tok.text in ")]}":
                depth -= 1
            elif depth == 0 and tok.text == "import":
                self._import(i + 1)
            elif depth == 0 and tok.text in ("const", "let", "var") and self._at(i + 2, "=") and self.t[i + 1].kind == "name":
                self.consts[self.t[i + 1].text] = i + 3
        for name in (*HELPERS, "flatRoutes"):
            if name not in self.imports:
                self.helpers.setdefault(name, name)

    def _import(self, i: int) -> None:
        names: list[tuple[str, str]] = []
        while i < len(self.t) and self.t[i].text != "from" and self.t[i].kind != "str":
            tok = self.t[i]
            if tok.kind == "name" and tok.text not in ("type", "as") and not self._at(i - 1, "as"):
                local = self.t[i + 2].text if self._at(i + 1, "as") and i + 2 < len(self.t) else tok.text
                names.append((tok.text, local))
            i += 1
        module = self.t[i + 1].text[1:-1] if self._at(i, "from") and i + 1 < len(self.t) else ""
        for imported, local in names:
            self.imports[local] = module
            if imported in (*HELPERS, "flatRoutes") and module.startswith("@react-router/"):
                self.helpers[local] = imported

    def _at(self, i: int, text: str) -> bool:
        return 0 <= i < len(self.t) and self.t[i].text == text

    def default_export(self) -> list[_Entry]:
        at = next((i + 2 for i, t in enumerate(self.t) if t.text == "export" and self._at(i + 1, "default")), None)
        if at is None:
            raise Unreadable("it has no `export default`")
        value, _ = self._expr(at)
        return self._entries(value, at)

    def _expr(self, i: int) -> tuple[Any, int]:
        """The value of the expression at token i, and the index after it (a trailing `satisfies T`/`as T` skipped)."""
        value, i = self._primary(i)
        while self._at(i, "satisfies") or self._at(i, "as"):
            i += 2
            while self._at(i, ".") or self._at(i, "<"):
                i = self._skip(i) if self._at(i, "<") else i + 2
        return value, i

    def _primary(self, i: int) -> tuple[Any, int]:
        if i >= len(self.t):
            raise Unreadable("it ends early")
        tok = self.t[i]
        if tok.text == "await":
            return self._expr(i + 1)
        if tok.text == "(":
            value, i = self._expr(i + 1)
            return value, self._expect(i, ")")
        if tok.text == "[":
            return self._array(i + 1)
        if tok.text == "{":
            return self._object(i + 1)
        if tok.kind == "str":
            return _unquote(tok.text), i + 1
        if tok.kind == "template" and "${" not in tok.text:
            return tok.text[1:-1], i + 1
        if tok.text in ("null", "undefined"):
            return None, i + 1
        if tok.kind == "name" and self._at(i + 1, "("):
            return self._call(tok, i + 2)
        if tok.kind == "name":
            return self._constant(tok), i + 1
        raise Unreadable(f"line {tok.line}: `{tok.text}` is not a route")

    def _array(self, i: int) -> tuple[list[Any], int]:
        items: list[Any] = []
        while not self._at(i, "]"):
            spread = self._at(i, "...")
            try:
                value, i = self._expr(i + 1 if spread else i)
            except Unreadable as e:  # one element we cannot read: the others still map
                self.config.notes.append(_note(self.where, e))
                value, i = [], self._next_element(i)
            items.extend(value if spread and isinstance(value, list) else [value])
            if self._at(i, ","):
                i += 1
            elif not self._at(i, "]"):
                raise Unreadable(f"line {self.t[min(i, len(self.t) - 1)].line}: an array this reader cannot follow")
        return items, i + 1

    def _object(self, i: int) -> tuple[dict[str, Any], int]:
        """An object literal's plain `key: value` pairs (route options, flatRoutes' options); the rest is skipped."""
        found: dict[str, Any] = {}
        while i < len(self.t) and not self._at(i, "}"):
            key = self.t[i].text.strip("\"'")
            if self._at(i + 1, ":"):
                try:
                    found[key], i = self._expr(i + 2)
                except Unreadable:
                    i = self._next_element(i + 2, "}")
            else:
                i = self._next_element(i, "}")
            i += self._at(i, ",")
        return found, i + 1

    def _next_element(self, i: int, close: str = "]") -> int:
        depth = 0
        while i < len(self.t):
            text = self.t[i].text
            if depth == 0 and text in (",", close):
                return i
            depth += (text in "([{") - (text in ")]}") if self.t[i].kind == "punct" else 0
            i += 1
        return i

    def _call(self, tok: _Tok, i: int) -> tuple[Any, int]:
        args = []
        while not self._at(i, ")"):
            value, i = self._expr(i)
            args.append(value)
            i += self._at(i, ",")
        helper = self.helpers.get(tok.text)
        if helper is None:
            where = f", imported from '{self.imports[tok.text]}'" if tok.text in self.imports else ""
            raise Unreadable(f"line {tok.line}: a call of `{tok.text}`{where} cannot be read without running it")
        return _helper(helper, args, tok, self), i + 1

    def _constant(self, tok: _Tok) -> Any:
        if tok.text in self.consts and tok.text not in self._reading:
            self._reading.add(tok.text)
            try:
                return self._expr(self.consts[tok.text])[0]
            finally:
                self._reading.discard(tok.text)
        where = f" (imported from '{self.imports[tok.text]}')" if tok.text in self.imports else ""
        raise Unreadable(f"line {tok.line}: `{tok.text}`{where} cannot be read without running it")

    def _entries(self, value: Any, at: int) -> list[_Entry]:
        if not isinstance(value, list) or not all(isinstance(v, _Entry | list) for v in value):
            raise Unreadable(f"line {self.t[min(at, len(self.t) - 1)].line}: its default export is not an array of routes")
        return [e for v in value for e in (v if isinstance(v, list) else [v]) if isinstance(e, _Entry)]

    def _skip(self, i: int) -> int:
        """Past the balanced brackets opening at i."""
        close, depth = _CLOSE.get(self.t[i].text, ">"), 0
        opening = self.t[i].text
        while i < len(self.t):
            depth += (self.t[i].text == opening) - (self.t[i].text == close)
            i += 1
            if depth == 0:
                return i
        return i

    def _expect(self, i: int, text: str) -> int:
        if not self._at(i, text):
            raise Unreadable(f"line {self.t[min(i, len(self.t) - 1)].line}: `{text}` expected")
        return i + 1


def _helper(name: str, args: list[Any], tok: _Tok, reader: _Reader) -> Any:
    """What React Router's helper returns: an entry, or (prefix) its children with the prefix put before their paths."""
    strings = [a for a in args if isinstance(a, str)]
    children = next((a for a in args if isinstance(a, list)), [])
    kids = [e for e in children if isinstance(e, _Entry)]
    if name == "flatRoutes":
        options = next((a for a in args if isinstance(a, dict)), {})
        folder = options.get("rootDirectory")
        reader.config.flat_routes = _file(folder).rstrip("/") if isinstance(folder, str) else "routes"
        return []
    if name == "prefix" and strings:
        return [_prefixed(strings[0], e) for e in kids]
    if name == "index" and strings:
        return _Entry(_file(strings[0]), "", index=True)
    if name == "layout" and strings:
        return _Entry(_file(strings[0]), None, children=kids)
    if name == "route" and len(args) >= 2 and isinstance(args[1], str) and isinstance(args[0], str | None):
        return _Entry(_file(args[1]), args[0], children=kids)
    raise Unreadable(f"line {tok.line}: `{tok.text}(...)` with arguments this reader cannot follow")


def _prefixed(prefix: str, entry: _Entry) -> _Entry:
    if entry.index or entry.path is not None:
        path = _join(prefix, entry.path) if entry.path else prefix
        return _Entry(entry.file, path, entry.index, entry.children)
    return _Entry(entry.file, None, False, [_prefixed(prefix, e) for e in entry.children])


def _collect(entries: list[_Entry], parent: str, files: dict[str, list[Route]]) -> list[Route]:
    """Each entry's routes into `files`; returns every route of `entries` and their children. A route with children
    maps to every route under it; a layout to its children's routes."""
    every: list[Route] = []
    for entry in entries:
        url = _join(parent, entry.path) if entry.path else parent
        below = _collect(entry.children, url, files)
        own = [Route(_brackets(url), under=bool(entry.children))] if entry.path is not None else []
        mine = own if own and entry.children else [*own, *below]
        files.setdefault(entry.file, [])
        files[entry.file] += [r for r in mine if r not in files[entry.file]]
        every += [*own, *below]
    return every


def _join(parent: str, path: str) -> str:
    return "/" + "/".join(s for s in [*parent.split("/"), *path.split("/")] if s)


def _brackets(url: str) -> str:
    """React Router's `:id`, `:id?`, `*` as the bracket segments every framework map here uses."""
    out = []
    for s in url.split("/"):
        if s == "*":
            out.append("[...rest]")
        elif s.startswith(":"):
            out.append(f"[[{s[1:-1]}]]" if s.endswith("?") else f"[{s[1:]}]")
        else:
            out.append(s.rstrip("?"))
    return "/".join(out) or "/"


def _file(path: str) -> str:
    return path.removeprefix("./")


def _unquote(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text[1:-1])
