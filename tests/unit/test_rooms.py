"""agent/ in rooms by job (issue #37): no import circle between any two modules of preview_qa (TYPE_CHECKING imports
and imports inside functions count: each is a dependency a reader must follow), no package of preview_qa over 12 modules
side by side (issue #65, 13), and
the rooms' import-linter contracts in pyproject.toml hold (lint-imports checks them in CI; this test names them)."""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "preview_qa"
AGENT = PACKAGE / "agent"
ROOM_LIMIT = 12
ROOMS = ["steps", "adapter", "replay", "evidence", "page", "guards", "browsers"]


def circles(imports: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's, iterative), each sorted, and any module that
    imports itself."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(imports):
        if start in index:
            continue
        work = [(start, iter(sorted(imports.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(imports.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or node in imports.get(node, ()):
                    found.append(sorted(component))
    return sorted(found)


def import_graph() -> dict[str, set[str]]:
    """Every import between preview_qa's modules, as grimp finds them: TYPE_CHECKING ones included (the default)."""
    graph = grimp.build_graph("preview_qa", cache_dir=None)
    return {m: graph.find_modules_directly_imported_by(m) for m in graph.modules}


def test_no_import_circle_between_modules() -> None:
    assert circles(import_graph()) == []


@pytest.mark.parametrize(
    ("imports", "found"),
    [
        ({"a": {"b"}, "b": {"a"}}, [["a", "b"]]),
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c"]]),
        ({"a": {"a"}}, [["a"]]),
        ({"a": {"b", "c"}, "b": {"c"}, "c": set()}, []),
    ],
)
def test_the_circle_check_can_fail(imports: dict[str, set[str]], found: list[list[str]]) -> None:
    assert circles(imports) == found


def test_no_package_holds_more_than_12_modules() -> None:
    """A room is any package of preview_qa, itself included (its own modules side by side, not its subpackages');
    __init__.py counts as a module."""
    rooms = {p.parent for p in PACKAGE.rglob("__init__.py")}
    assert AGENT in rooms and PACKAGE in rooms
    sizes = {str(room.relative_to(PACKAGE.parent)): len(list(room.glob("*.py"))) for room in rooms}
    assert {room: n for room, n in sizes.items() if n > ROOM_LIMIT} == {}


def contracts() -> list[dict[str, object]]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]


def test_the_agents_rooms_are_layered_top_to_bottom() -> None:
    """The layers contract inside preview_qa.agent lists every room, above the ones it may import."""
    inside = [c for c in contracts() if c["type"] == "layers" and c.get("containers") == ["preview_qa.agent"]]
    assert len(inside) == 1
    rooms = sorted(p.parent.name for p in AGENT.glob("*/__init__.py"))
    listed = [name for layer in inside[0]["layers"] for name in str(layer).split(" | ")]  # type: ignore[attr-defined]
    assert sorted(set(listed) & set(rooms)) == rooms
    assert [name for name in listed if name in ROOMS] == ROOMS


def test_only_the_adapter_imports_browser_use_and_the_browsers_room_never() -> None:
    forbidden = {(tuple(c["source_modules"]), tuple(c["forbidden_modules"])) for c in contracts() if c["type"] == "forbidden"}  # type: ignore[arg-type]
    others = tuple(f"preview_qa.agent.{room}" for room in ROOMS if room != "adapter")
    assert any(
        set(others) | {"preview_qa.agent.session", "preview_qa.agent.browser_agents"} <= set(s) and "browser_use" in f
        for s, f in forbidden
    )
    assert any("preview_qa.agent.browsers" in s and "browser_use" in f for s, f in forbidden)
