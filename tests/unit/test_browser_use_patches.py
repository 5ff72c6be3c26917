"""Every touch of browser-use's (or cdp_use's, bubus's) private members and every patch of a library's class lives in
the patches ledger (agent/adapter/patches.py, and its item 2, browser-use's session on one context, in
agent/adapter/context_session.py), and every environment variable set for it in agent/adapter/env.py (which must not
import browser-use: it runs before it), so that an upgrade of browser-use has three short modules to read."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import preview_qa.agent

AGENT = Path(preview_qa.agent.__file__).parent
PATCHES = AGENT / "adapter" / "patches.py"
SESSION = AGENT / "adapter" / "context_session.py"  # item 2 of the ledger
ENVIRONMENT = AGENT / "adapter" / "env.py"
LIBRARIES = ("browser_use", "cdp_use", "bubus")


def library_names(tree: ast.Module) -> set[str]:
    """The names a module binds to browser-use's or cdp_use's classes, functions and modules."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in LIBRARIES:
            names |= {alias.asname or alias.name for alias in node.names}
        elif isinstance(node, ast.Import):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names if a.name.split(".")[0] in LIBRARIES}
    return names


def private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def touches(source: str) -> list[str]:
    """What `source` does that belongs in agent/adapter/patches.py: a private member of another object read or
    written, an attribute of an imported class or module assigned, the environment written, or a private method of a
    library class overridden."""
    tree = ast.parse(source)
    imported = library_names(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and private(node.attr):
            owner = node.value
            if not (isinstance(owner, ast.Name) and owner.id in ("self", "cls")):
                found.append(f"line {node.lineno}: {ast.unparse(node)}")
        if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id in imported:
                    found.append(f"line {node.lineno}: {ast.unparse(target)} assigned")
        if isinstance(node, ast.Attribute) and ast.unparse(node) == "os.environ":
            found.append(f"line {node.lineno}: os.environ")
        if isinstance(node, ast.ClassDef) and any(ast.unparse(base).split(".")[0] in imported for base in node.bases):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and private(item.name):
                    found.append(f"line {item.lineno}: {node.name}.{item.name} overrides a private method")
                if isinstance(item, ast.AnnAssign | ast.Assign):
                    for target in item.targets if isinstance(item, ast.Assign) else [item.target]:
                        if isinstance(target, ast.Name) and private(target.id):
                            found.append(f"line {item.lineno}: {node.name}.{target.id} declares a private attribute")
    return found


def test_only_the_patches_module_touches_browser_use_in_private() -> None:
    found = {
        str(path.relative_to(AGENT)): hits
        for path in sorted(AGENT.rglob("*.py"))
        if path not in (PATCHES, SESSION, ENVIRONMENT)
        if (hits := touches(path.read_text(encoding="utf-8")))
    }
    assert found == {}, "move these into agent/adapter/patches.py, each with what it relies on and why"


def test_the_patches_module_is_where_they_are() -> None:
    """The check above can fail: it finds each kind of touch in the module that holds them all."""
    hits = " ".join(touches(PATCHES.read_text(encoding="utf-8")) + touches(SESSION.read_text(encoding="utf-8")))
    assert "os.environ" in " ".join(touches(ENVIRONMENT.read_text(encoding="utf-8")))
    assert not library_names(ast.parse(ENVIRONMENT.read_text(encoding="utf-8")))
    for expected in (
        "_cdp_create_new_page overrides",
        "_cloud_browser_client declares",
        "CDPClient.send_raw assigned",
        "_context_id declares",
        "bubus_service._get_global_lock assigned",
    ):
        assert expected in hits


@pytest.mark.parametrize(
    ("source", "found"),
    [
        ("from browser_use import BrowserSession\nclass S(BrowserSession):\n    def _reset(self): ...", 1),
        ("from cdp_use import CDPClient\nCDPClient.send_raw = None", 1),
        ("import os\nos.environ.setdefault('A', 'b')", 1),
        ("def f(session):\n    return session._cdp_client_root", 1),
        ("class Ours:\n    def _helper(self):\n        return self._x", 0),
        ("from browser_use import Tools\nclass T(Tools):\n    def act(self): ...", 0),
    ],
)
def test_the_check_tells_a_touch_from_our_own_private_code(source: str, found: int) -> None:
    assert len(touches(source)) == found
