"""The run's secrets are gathered once, by the composition root, and handed down: no module builds a Redactor of its
own (a second one would miss what the first knows: the resolved API key, a saved login's cookies)."""

from __future__ import annotations

import ast
from pathlib import Path

import preview_qa

SOURCE = Path(preview_qa.__file__).parent
# the composition root: a run's redactor (execute), a merge's, which knows the GitHub token only, and the MCP server's
# (tool_redactor: the secrets its environment holds for the manifest a call names)
ROOT = "app.py"


def constructor_names(module: ast.Module) -> set[str]:
    """Redactor's class methods that return a Redactor (of_tests, ...): calling one constructs one too."""
    found = set()
    for node in ast.walk(module):
        if isinstance(node, ast.ClassDef) and node.name == "Redactor":
            for item in node.body:
                decorators = [d.id for d in getattr(item, "decorator_list", []) if isinstance(d, ast.Name)]
                if isinstance(item, ast.FunctionDef) and "classmethod" in decorators:
                    found.add(item.name)
    return found


def constructions(source: str, constructors: set[str]) -> list[str]:
    """Each call in `source` that builds a Redactor, as 'function:line': Redactor(...) under any name it is imported
    as, redact.Redactor(...), and Redactor.<class method>(...)."""
    module = ast.parse(source)
    names = {"Redactor"} | {
        alias.asname
        for node in ast.walk(module)
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
        if alias.name == "Redactor" and alias.asname
    }
    found = []

    def visit(node: ast.AST, function: str) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            function = node.name
        if isinstance(node, ast.Call) and _builds(node.func, names, constructors):
            found.append(f"{function}:{node.lineno}")
        for child in ast.iter_child_nodes(node):
            visit(child, function)

    visit(module, "<module>")
    return found


def _builds(func: ast.expr, names: set[str], constructors: set[str]) -> bool:
    if isinstance(func, ast.Name):
        return func.id in names
    if isinstance(func, ast.Attribute):
        if func.attr == "Redactor":  # redact.Redactor(...)
            return True
        return func.attr in constructors and _builds(func.value, names, set())  # Redactor.of_tests(...)
    return False


def every_construction() -> dict[str, list[str]]:
    constructors = constructor_names(ast.parse((SOURCE / "secrets" / "redact.py").read_text(encoding="utf-8")))
    found = {}
    for path in sorted(SOURCE.rglob("*.py")):
        calls = constructions(path.read_text(encoding="utf-8"), constructors)
        if calls:
            found[str(path.relative_to(SOURCE))] = sorted(set(c.split(":")[0] for c in calls))
    return found


def test_the_finder_sees_every_way_of_building_a_redactor() -> None:
    source = """
from preview_qa.secrets import redact
from preview_qa.secrets.redact import Redactor, Redactor as Scrub
def a(): return Redactor({})
def b(): return Redactor.of_tests({}, api_key="k")
def c(): return Scrub({})
def d(): return redact.Redactor({})
def e(redactor): return redactor.text("x"), Redactor
"""
    assert [c.split(":")[0] for c in constructions(source, {"of_tests"})] == ["a", "b", "c", "d"]
    assert "of_tests" in constructor_names(ast.parse((SOURCE / "secrets" / "redact.py").read_text(encoding="utf-8")))


def test_only_the_composition_root_builds_a_redactor() -> None:
    # the class's own `cls(...)` in secrets/redact.py is the constructor itself, not a construction elsewhere
    assert every_construction() == {ROOT: ["_prepare", "merge", "tool_redactor"]}
