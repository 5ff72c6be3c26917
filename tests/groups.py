"""Which tests must run on one pytest-xdist worker: those that read one shared run (`--dist=loadgroup`).

A fixture wider than a test (a module's CLI run whose results its tests read, the session's `preview-qa demo`) runs
once in each worker that runs a test asking for it. Under `--dist=loadgroup` the tests are spread one by one unless
they carry the same `xdist_group` mark; this module gives every test that asks, directly or through another fixture,
for such a fixture of the e2e tests (tests/e2e/) a group, and tests that share one (or share a test that does) the
same group. The rest (unit tests, an e2e test with its own CLI run) is spread test by test, so both workers keep busy
to the end, and a file's two shared runs (say, an agent run and a replay) may run on two workers at once.

pytest-xdist hands out the groups first (the most tests first), then the tests of their own as collected: the e2e
tests, then the unit tests. Among those the unit property tests (hypothesis: hundreds of examples, up to 28 s each,
most of the longest unit tests) go first (`property_tests_first`): handed out last as collected (test_schema.py's,
among the last files), one could keep a worker busy on one core after the others had finished.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import pytest

SHARED_IN = "tests.e2e"  # the fixtures that hold a shared run are defined here
WIDER_THAN_A_TEST = frozenset({"class", "module", "package", "session"})
CHEAP = frozenset({"site", "production", "css"})  # a server thread or a file read: each worker may make its own


def shared_keys(item: pytest.Item) -> list[str]:
    """The shared runs `item` reads: `module::fixture` (a session fixture: `fixture`), with the parameter's index of a
    parametrized one (each parameter is a run of its own)."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return []
    keys = []
    params = getattr(getattr(item, "callspec", None), "indices", {})
    for name, definitions in info.name2fixturedefs.items():
        fixture = definitions[-1]  # the one this test gets, after any override
        module = getattr(fixture.func, "__module__", "") or ""
        if name in CHEAP or fixture.scope not in WIDER_THAN_A_TEST or not module.startswith(SHARED_IN):
            continue
        key = name if fixture.scope == "session" else f"{item.nodeid.split('::')[0]}::{name}"
        keys.append(f"{key}-{params[name]}" if name in params else key)
    return sorted(keys)


def groups(tests: Iterable[tuple[str, Sequence[str]]]) -> dict[str, str]:
    """(test id, its shared keys) -> {test id: group} for every test with a key; tests joined by a key share a group,
    named by the first key (in sorted order) among them. A group's name holds no `@` nor `]` (xdist splits on them)."""
    parent: dict[str, str] = {}

    def root(key: str) -> str:
        while parent.setdefault(key, key) != key:
            parent[key] = parent[parent[key]]
            key = parent[key]
        return key

    keyed = [(test, list(keys)) for test, keys in tests if keys]
    for _, keys in keyed:
        for other in keys[1:]:
            a, b = sorted((root(keys[0]), root(other)))
            parent[b] = a
    return {test: root(keys[0]).replace("@", "_").replace("]", ")").replace("[", "(") for test, keys in keyed}


def mark_shared_runs(items: list[pytest.Item]) -> None:
    """Give each test that reads a shared run its xdist_group mark (see the module's docstring)."""
    found = groups((item.nodeid, shared_keys(item)) for item in items)
    for item in items:
        if item.nodeid in found:
            item.add_marker(pytest.mark.xdist_group(found[item.nodeid]))


def _rank(item: pytest.Item) -> int:
    if item.nodeid.startswith("tests/e2e/"):
        return 0  # an e2e test: a CLI run or a browser, seconds to a minute
    return 1 if getattr(getattr(item, "obj", None), "is_hypothesis_test", False) else 2


def property_tests_first(items: list[pytest.Item]) -> None:
    """The e2e tests, then the unit property tests, then the other unit tests, each as collected (see the docstring)."""
    items.sort(key=_rank)  # stable
