"""Load YAML safely while remembering the line of every key, so errors can point at it, and every unquoted text a
comment on its line may have cut short."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from preview_qa.errors import ManifestError

MAX_BYTES = 1024 * 1024
MAX_NODES = 100_000
MAX_DEPTH = 40

Loc = tuple[str | int, ...]
_COMMENT_AFTER = re.compile(r"[ \t]+#[^\n]*")  # what follows a plain value on its line when YAML reads a comment there


class YamlSource:
    """A YAML document turned into plain Python values, plus the line where each value's key stands."""

    def __init__(self, file: str, data: Any, lines: dict[Loc, int], commented: dict[Loc, str] | None = None):
        self.file, self.data, self._lines = file, data, lines
        # An unquoted text followed by a comment on its line -> that comment (' #1001 is listed'): YAML ends a plain
        # value at ' #', so `task: Check that order #1001 is listed` reads 'Check that order'.
        self.commented = commented or {}

    @classmethod
    def read(cls, path: Path) -> YamlSource:
        file = str(path)
        try:
            raw = path.read_bytes()
        except OSError as e:
            raise ManifestError(file, None, None, f"cannot read the file ({e.strerror or e}).") from None
        if len(raw) > MAX_BYTES:
            raise ManifestError(file, None, None, f"the file is {len(raw)} bytes; a manifest may have at most {MAX_BYTES}.")
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as e:
            line = raw[: e.start].count(b"\n") + 1
            raise ManifestError(file, line, None, "the file is not valid UTF-8; save it as UTF-8.") from None
        return cls.parse(text, file)

    @classmethod
    def parse(cls, text: str, file: str = "<manifest>") -> YamlSource:
        try:
            node = yaml.compose(text, Loader=yaml.SafeLoader)
        except yaml.MarkedYAMLError as e:
            line, at_end = _error_line(text, e)
            problem = (e.problem or str(e)).strip()
            hint = " (YAML does not allow tabs for indentation; use spaces)" if "\\t" in problem or "tab" in problem else ""
            hint = hint or _comment_hint(text, e) or at_end
            raise ManifestError(file, line, None, f"invalid YAML: {problem}{hint}.") from None
        except yaml.YAMLError as e:
            raise ManifestError(file, None, None, f"invalid YAML: {e}.") from None
        builder = _Builder(file)
        data = builder.build(node, ()) if node is not None else None
        return cls(file, data, builder.lines, builder.commented)

    def line(self, loc: Loc) -> int | None:
        """The line of the deepest known key on the way to `loc`."""
        for end in range(len(loc), -1, -1):
            if loc[:end] in self._lines:
                return self._lines[loc[:end]]
        return None

    def error(self, loc: Loc, message: str) -> ManifestError:
        # An empty document has no lines to point at; its line 1 is where the missing content belongs.
        return ManifestError(self.file, self.line(loc) or 1, format_loc(loc) or None, message)


def _error_line(text: str, error: yaml.MarkedYAMLError) -> tuple[int | None, str]:
    """The line a YAML error is on, always one of the file's: at the file's end (a quote or a list left open), the
    line where the open thing starts, else the last line with text; and, for such an end, the words that say so."""
    last = len(text.rstrip().splitlines())
    marks = [m.line + 1 for m in (error.problem_mark, error.context_mark) if m is not None]
    if not marks:
        return None, ""
    if marks[0] <= last:
        return marks[0], ""
    opened = next((line for line in marks[1:] if line <= last), None)
    if opened is not None:
        return opened, " (the file ends before what starts on this line is closed)"
    return max(last, 1), " (the file ends after this line)"


def _comment_hint(text: str, error: yaml.MarkedYAMLError) -> str:
    """For a flow collection left open (`text: [Order #1001, Paid]`): the ' #' that made the rest of its line a comment."""
    start, end = error.context_mark, error.problem_mark
    if start is None or end is None or not (error.problem or "").startswith("expected ','"):
        return ""
    lines = text.splitlines()
    for number in range(start.line, min(end.line + 1, len(lines))):
        if _COMMENT_AFTER.search(lines[number][start.column if number == start.line else 0 :]):
            return f" (line {number + 1} has ' #', which starts a YAML comment there: quote a text that holds one)"
    return ""


def format_loc(loc: Loc) -> str:
    """('tests', 0, 'expect', 'url') -> 'tests[0].expect.url'."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


class _Builder:
    """Walks the composed node tree; refuses duplicate keys and alias bombs instead of guessing."""

    def __init__(self, file: str):
        self.file = file
        self.lines: dict[Loc, int] = {}
        self.commented: dict[Loc, str] = {}
        self.nodes = 0
        self._scalars = yaml.SafeLoader("")  # YAML 1.1 safe scalar rules: ints, floats, bools, nulls, strings

    def build(self, node: yaml.Node, loc: Loc) -> Any:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise ManifestError(
                self.file,
                node.start_mark.line + 1,
                format_loc(loc) or None,
                f"the document expands to more than {MAX_NODES} values (an alias bomb?); simplify it.",
            )
        if len(loc) > MAX_DEPTH:
            raise ManifestError(
                self.file,
                node.start_mark.line + 1,
                None,
                f"values are nested more than {MAX_DEPTH} levels deep (a recursive alias?); flatten them.",
            )
        self.lines.setdefault(loc, node.start_mark.line + 1)
        if isinstance(node, yaml.MappingNode):
            return self._mapping(node, loc)
        if isinstance(node, yaml.SequenceNode):
            return [self.build(child, (*loc, i)) for i, child in enumerate(node.value)]
        try:
            value = self._scalars.construct_object(node, deep=True)
        except yaml.YAMLError as e:  # an unknown tag (`!foo`, `!!python/object`) or a malformed !!binary, !!timestamp...
            problem = (getattr(e, "problem", None) or str(e)).strip()
            raise ManifestError(
                self.file, node.start_mark.line + 1, format_loc(loc) or None, f"invalid YAML value: {problem}."
            ) from None
        if isinstance(value, str) and (comment := _comment_after(node)) is not None:
            self.commented[loc] = comment
        return value

    def _mapping(self, node: yaml.MappingNode, loc: Loc) -> dict[Any, Any]:
        out: dict[Any, Any] = {}
        for key_node, value_node in _merged_pairs(node):
            key = self.build(key_node, (*loc, "<key>"))
            if isinstance(key, list | dict):
                raise ManifestError(
                    self.file,
                    key_node.start_mark.line + 1,
                    format_loc(loc) or None,
                    "a key must be a plain value, not a list or mapping.",
                )
            name = str(key)
            child = (*loc, name)
            if name in out:
                raise ManifestError(
                    self.file,
                    key_node.start_mark.line + 1,
                    format_loc(child),
                    f"duplicate key '{name}' (first given on line {self.lines[child]}); keep one.",
                )
            self.lines[child] = key_node.start_mark.line + 1
            out[name] = self.build(value_node, child)
            self.lines[child] = key_node.start_mark.line + 1
        return out


def _comment_after(node: yaml.Node) -> str | None:
    """The comment on the line of a plain (unquoted) value, right after it (' #1001 is listed'), or None."""
    if not isinstance(node, yaml.ScalarNode) or node.style is not None:
        return None
    end = node.end_mark
    buffer = getattr(end, "buffer", None)
    if not isinstance(buffer, str):
        return None
    found = _COMMENT_AFTER.match(buffer, end.pointer)
    return found.group().rstrip("\x00").rstrip() if found else None


def _merged_pairs(node: yaml.MappingNode) -> list[tuple[yaml.Node, yaml.Node]]:
    """The mapping's pairs with YAML merge keys (`<<: *anchor`) expanded; explicit keys win over merged ones."""
    merged: list[tuple[yaml.Node, yaml.Node]] = []
    own: list[tuple[yaml.Node, yaml.Node]] = []
    for key_node, value_node in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":
            sources = value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]
            for source in sources:
                if isinstance(source, yaml.MappingNode):
                    merged.extend(_merged_pairs(source))
        else:
            own.append((key_node, value_node))
    own_keys = {k.value for k, _ in own if isinstance(k, yaml.ScalarNode)}
    return [(k, v) for k, v in merged if not (isinstance(k, yaml.ScalarNode) and k.value in own_keys)] + own
