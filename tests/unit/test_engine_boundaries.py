"""What the engine and the verdict may not do, read from their source: the engine never makes or edits a Verdict (one
pure function composes it, verdict/decide.final_verdict), and neither reads the process's environment or GitHub's
(config.py reads it when the run's config is built)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import preview_qa.engine
import preview_qa.verdict

ENGINE = sorted(Path(preview_qa.engine.__path__[0]).rglob("*.py"))
PURE = [*ENGINE, *sorted(Path(preview_qa.verdict.__path__[0]).rglob("*.py"))]
VERDICT_FIELDS = {"status", "reason", "causes"}


def tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), str(path))


def verdict_edits(module: ast.Module) -> list[str]:
    """Each place that builds a Verdict, assigns to a verdict's field, or copies something with a verdict's fields
    changed (model_copy(update=...), dataclasses.replace)."""
    found = []
    for node in ast.walk(module):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name | ast.Attribute):
            name = node.func.id if isinstance(node.func, ast.Name) else node.func.attr
            if name == "Verdict":
                found.append(f"line {node.lineno}: Verdict(...)")
            changed = {k.arg for k in node.keywords} | {
                key.value
                for k in node.keywords
                if k.arg == "update" and isinstance(k.value, ast.Dict)
                for key in k.value.keys
                if isinstance(key, ast.Constant)
            }
            if name in ("model_copy", "replace") and changed & VERDICT_FIELDS:
                found.append(f"line {node.lineno}: {name}(...) changing {sorted(changed & VERDICT_FIELDS)}")
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AugAssign) else []
        for target in targets:
            for part in ast.walk(target):
                if isinstance(part, ast.Attribute) and part.attr in VERDICT_FIELDS:
                    found.append(f"line {node.lineno}: assigns .{part.attr}")
    return found


def environment_reads(module: ast.Module) -> list[str]:
    """Each read of os.environ / os.getenv, and each GITHUB_* name."""
    found = []
    for node in ast.walk(module):
        if isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv", "environb"):
            found.append(f"line {node.lineno}: .{node.attr}")
        if isinstance(node, ast.alias) and node.name in ("environ", "getenv"):
            found.append(f"imports {node.name}")
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and "GITHUB_" in node.value:
            found.append(f"line {node.lineno}: {node.value!r}")
    return found


@pytest.mark.parametrize("path", ENGINE, ids=lambda p: p.name)
def test_the_engine_never_makes_or_edits_a_verdict(path: Path) -> None:
    assert verdict_edits(tree(path)) == []


@pytest.mark.parametrize("path", PURE, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_neither_engine_nor_verdict_reads_the_environment(path: Path) -> None:
    assert environment_reads(tree(path)) == []


def test_the_checks_find_what_they_look_for() -> None:
    """Neither check can pass by finding nothing: each names the edits and the reads it is shown."""
    edits = ast.parse(
        "v = Verdict(status=s, reason='r')\nv.reason = 'x'\nr.model_copy(update={'status': s})\nreplace(v, causes=[])\n"
    )
    assert sorted(e.split(":")[0] for e in verdict_edits(edits)) == ["line 1", "line 2", "line 3", "line 4"]
    reads = ast.parse("import os\nos.environ.get('X')\nos.getenv('Y')\nfrom os import environ\nname = 'GITHUB_REF_NAME'\n")
    assert len(environment_reads(reads)) == 4
