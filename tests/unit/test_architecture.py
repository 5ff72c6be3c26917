"""The layering holds where it matters to a user: the verdict, runner, manifest, results and reporters load without
browser-use (only preview_qa.agent imports it), the CLI starts without it, and the agent's modules a replay runs on
load without it too. And the tests stand alone: no test
module imports another; what they share lives in helper modules (tests/builders.py, tests/fakes/, ...)."""

from __future__ import annotations

import ast
import json
import pkgutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import preview_qa.engine
import preview_qa.manifest
import preview_qa.reporters
import preview_qa.secrets
import preview_qa.selection
import preview_qa.verdict

PACKAGES = [
    preview_qa.verdict,
    preview_qa.engine,
    preview_qa.manifest,
    preview_qa.selection,
    preview_qa.secrets,
    preview_qa.reporters,
]
WITHOUT_BROWSER_USE = [
    "preview_qa.results",
    "preview_qa.events",
    "preview_qa.app",
    "preview_qa.cli",
    "preview_qa.mcp.server",  # a coding agent's server starts quickly, and only the runs it starts load the agent
    *(p.__name__ for p in PACKAGES),
    *(m.name for p in PACKAGES for m in pkgutil.walk_packages(p.__path__, f"{p.__name__}.")),
]
# One Python per worker imports the libraries the probes share, then forks a child for each module to import: each
# probe sees a fresh interpreter's modules, without a new interpreter importing pydantic, click and the MCP SDK again
# (86 interpreters of their own were 17 to 25 CPU-s). None of these libraries imports browser-use or preview_qa.
SHARED = ("asyncio", "pydantic", "click", "yaml", "rich.console", "anyio", "mcp.server.lowlevel", "mcp_types")
FORKING = """
import importlib, json, os, sys
for name in sys.argv[1:]:
    importlib.import_module(name)
for line in sys.stdin:
    pid = os.fork()
    if pid == 0:
        try:
            importlib.import_module(line.strip())
            found = sorted(m for m in sys.modules if m.split(".")[0] == "browser_use" or m.startswith("preview_qa.agent"))
        except BaseException as e:
            found = {"error": repr(e)}
        os.write(1, (json.dumps(found) + "\\n").encode())
        os._exit(0)
    os.waitpid(pid, 0)
"""


@pytest.fixture(scope="session")
def loaded_by() -> Iterator[Callable[[str], list[str]]]:
    """`loaded_by(module)`: the browser-use and preview_qa.agent modules that importing `module` loads."""
    probe = subprocess.Popen([sys.executable, "-c", FORKING, *SHARED], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    to, back = probe.stdin, probe.stdout
    assert to is not None and back is not None

    def loaded(module: str) -> list[str]:
        to.write(module + "\n")
        to.flush()
        found = json.loads(back.readline())
        assert isinstance(found, list), f"importing {module}: {found}"
        return found

    yield loaded
    to.close()
    probe.wait(timeout=60)


@pytest.mark.parametrize("module", WITHOUT_BROWSER_USE)
def test_importing_does_not_load_browser_use_or_the_agent(module: str, loaded_by: Callable[[str], list[str]]) -> None:
    assert loaded_by(module) == []


REPLAY_PATH = [
    "preview_qa.agent.browser_agents",
    "preview_qa.agent.session",
    "preview_qa.agent.steps.stepped",  # a test written as steps whose goals all replay, and its exact steps
    "preview_qa.agent.browsers.pool",
    "preview_qa.agent.replay.player",
    "preview_qa.agent.guards.masking",
]


@pytest.mark.parametrize("module", REPLAY_PATH)
def test_what_a_replay_runs_on_does_not_load_browser_use(module: str, loaded_by: Callable[[str], list[str]]) -> None:
    """browser-use is imported the first time a test needs the agent (tests/e2e/test_replay_launch.py runs it)."""
    assert [m for m in loaded_by(module) if m.split(".")[0] == "browser_use"] == []


def test_the_agent_package_does_load_browser_use(loaded_by: Callable[[str], list[str]]) -> None:
    """The checks above can fail: the one package allowed to import browser-use shows up in the same probe."""
    assert "browser_use" in loaded_by("preview_qa.agent.adapter.connect")


# What a run's start imports, before its first browser starts; and libraries only some runs need (a visual comparison, a
# cost budget, an output_schema, `paths`, a failing check) or that load off the run's way (Pillow on the writer thread,
# Jinja2 on the report's, httpx on the preview check's)
RUN_START = ["preview_qa.cli", "preview_qa.engine.runner", "preview_qa.engine.replay_cache", *REPLAY_PATH]
RUN_START += ["preview_qa.reporters.artifacts", "preview_qa.reporters.html", "preview_qa.reporters.junit"]
NOT_AT_START = ("numpy", "genai_prices", "jsonschema", "pathspec", "rapidfuzz", "PIL", "jinja2", "httpx")
STARTED = (
    "import sys, importlib; [importlib.import_module(m) for m in sys.argv[1:]]; "
    f"print(sorted(m for m in {NOT_AT_START!r} if m in sys.modules))"
)


def test_a_runs_start_imports_only_what_every_run_needs() -> None:
    """Each of these is imported where it is needed (0.3 s of imports in all, before the first browser started)."""
    proc = subprocess.run([sys.executable, "-c", STARTED, *RUN_START], capture_output=True, text=True, check=True, timeout=120)
    assert proc.stdout.strip() == "[]"
    probe = subprocess.run([sys.executable, "-c", STARTED, "preview_qa.verdict.checks.visual"], capture_output=True, text=True)
    assert "'numpy'" in probe.stdout  # the probe can fail: a module that does import one of them shows up


TESTS = Path(__file__).resolve().parents[1]


def is_test_module(name: str) -> bool:
    path = TESTS.parent.joinpath(*name.split("."))
    return path.name.startswith("test_") and path.with_suffix(".py").is_file()


def imported_test_modules(source: str, module: str) -> list[str]:
    """The test modules (tests/**/test_*.py) that `source`, the text of the module named `module`, imports, in any
    form: `import a.b`, `from a.b import c` (c may be a module), relative imports, imports inside functions."""
    package = module.split(".")[:-1]
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            parts = package[: len(package) - node.level + 1] if node.level else []
            base = ".".join([*parts, *([node.module] if node.module else [])])
            names |= {base, *(f"{base}.{alias.name}" for alias in node.names)}
    return sorted(name for name in names if is_test_module(name))


def test_no_test_module_imports_another() -> None:
    importing = {}
    for path in sorted(TESTS.rglob("test_*.py")):
        module = ".".join(path.relative_to(TESTS.parent).with_suffix("").parts)
        if imported := imported_test_modules(path.read_text(encoding="utf-8"), module):
            importing[module] = imported
    assert importing == {}, "move what they share to a helper module (tests/builders.py, tests/fakes/, ...)"


@pytest.mark.parametrize(
    ("source", "found"),
    [
        ("from tests.unit.test_concurrency import x", ["tests.unit.test_concurrency"]),
        ("import tests.unit.test_concurrency as c", ["tests.unit.test_concurrency"]),
        ("from tests.unit import test_concurrency", ["tests.unit.test_concurrency"]),
        ("from .test_concurrency import x", ["tests.e2e.test_concurrency"]),
        ("from . import test_concurrency", ["tests.e2e.test_concurrency"]),
        ("from ..unit.test_concurrency import x", ["tests.unit.test_concurrency"]),
        ("def f():\n    from tests.e2e.test_cancel import x", ["tests.e2e.test_cancel"]),
        ("from tests.builders import run\nfrom tests.conftest import clean_env\nfrom tests.fakes.github import read_log", []),
        ("from preview_qa.reporters.files import test_dir\nfrom . import processes", []),
    ],
)
def test_the_import_check_finds_a_test_module_imported_in_any_form(source: str, found: list[str]) -> None:
    """The check above can fail: every way to import a test module is caught, and helpers and fixtures are not."""
    assert imported_test_modules(source, "tests.e2e.test_example") == found


SOURCE = Path(preview_qa.verdict.__file__).parents[1]
MODULE_LINES, FUNCTION_LINES = 400, 60


def oversized(source: str) -> list[str]:
    """What in a module's text is over the size rule and not explained at its top (the text before its first import):
    the module itself over MODULE_LINES lines, and each function over FUNCTION_LINES lines, unless the top names it."""
    top = source.split("\nfrom ", 1)[0].split("\nimport ", 1)[0]
    found = [] if source.count("\n") <= MODULE_LINES or f"Over {MODULE_LINES} lines" in top else ["the module"]
    for node in ast.walk(ast.parse(source)):
        long = isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and (node.end_lineno or 0) - node.lineno >= FUNCTION_LINES
        if long and f"{node.name} is over" not in top:
            found.append(node.name)
    return found


def test_long_modules_and_functions_say_why_at_their_top() -> None:
    """The layout's rule (CONTRIBUTING.md): a module over 400 lines or a function over 60 says why, first."""
    over = {str(p.relative_to(SOURCE)): o for p in sorted(SOURCE.rglob("*.py")) if (o := oversized(p.read_text()))}
    assert over == {}, "split it, or say at the module's top why it is long ('# Over 400 lines: ...', '# f is over ...')"


@pytest.mark.parametrize(
    ("source", "found"),
    [
        ("x = 1\n" * 401, ["the module"]),
        ("# Over 400 lines: the pages' HTML\n" + "x = 1\n" * 401, []),
        ("def f():\n" + "    x = 1\n" * 60, ["f"]),
        ("# f is over 60 lines: a table\ndef f():\n" + "    x = 1\n" * 60, []),
        ("def f():\n" + "    x = 1\n" * 59, []),
    ],
)
def test_the_size_check_can_fail(source: str, found: list[str]) -> None:
    assert oversized(source) == found
