"""Setup tests: which test saves the browser state another uses, the tests a selection needs first, and cycles."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, TypeVar


class Stateful(Protocol):
    """What this module reads of a test: its name and the browser state it saves and starts from."""

    @property
    def name(self) -> str: ...

    @property
    def save_state(self) -> str | None: ...

    @property
    def use_state(self) -> str | None: ...


T = TypeVar("T", bound=Stateful)


def savers(tests: Sequence[Stateful]) -> dict[str, str]:
    """state name -> the name of the (first) test that saves it."""
    found: dict[str, str] = {}
    for test in tests:
        if test.save_state is not None:
            found.setdefault(test.save_state, test.name)
    return found


def setup_of(tests: Sequence[Stateful]) -> dict[str, str]:
    """test name -> the name of the test it waits for (the one saving its use_state), for every test that has one."""
    saved_by = savers(tests)
    return {t.name: saved_by[t.use_state] for t in tests if t.use_state is not None and t.use_state in saved_by}


def with_setup_tests(tests: Sequence[T], chosen: Sequence[T]) -> list[T]:
    """`chosen` plus every setup test they need, directly or through other setups, in the order of `tests`.
    Every way of narrowing a run (--only, --shard, tags, changed files) ends here, so a dependent never runs alone."""
    needs = setup_of(tests)
    wanted = {t.name for t in chosen}
    pending = list(wanted)
    while pending:
        setup = needs.get(pending.pop())
        if setup is not None and setup not in wanted:
            wanted.add(setup)
            pending.append(setup)
    return [t for t in tests if t.name in wanted]


def cycle_from(tests: Sequence[Stateful], start: str) -> list[str] | None:
    """The tests of the dependency cycle that `start` leads into, in order from the first test on it; None if none.
    Each test waits for at most one other, so following those links either ends or comes back round."""
    needs = setup_of(tests)
    path: list[str] = []
    current: str | None = start
    while current is not None and current not in path:
        path.append(current)
        current = needs.get(current)
    return None if current is None else path[path.index(current) :]
