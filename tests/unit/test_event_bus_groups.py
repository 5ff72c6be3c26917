"""The browser-use sessions of concurrent tests do not take turns (agent/adapter/patches.py, item 8): bubus ran every
event handler of the process under one lock, so each test's actions and page captures waited for the others'."""

from __future__ import annotations

import asyncio

from bubus import BaseEvent, EventBus

from preview_qa.agent.adapter.patches import apply, own_event_buses

TESTS = 3


class Step(BaseEvent[None]):
    pass


async def one_test(n: int, all_running: asyncio.Barrier, seen: dict[int, set[str]]) -> bool:
    """A test's session: its bus's handler runs until every test's handler runs at once (with one lock for every bus,
    the first holds it and the others never start), and lists the buses its test can reach."""
    own_event_buses()
    bus, met = EventBus(name=f"test_{n}"), []

    async def handler(event: Step) -> None:
        await asyncio.wait_for(all_running.wait(), 5)
        seen[n] = {b.name for b in EventBus.all_instances}
        met.append(True)

    bus.on(Step, handler)
    await bus.dispatch(Step())
    await bus.stop()
    return bool(met)


def test_concurrent_tests_handlers_run_at_once_and_see_only_their_own_buses() -> None:
    apply()
    seen: dict[int, set[str]] = {}

    async def run() -> list[bool]:
        all_running = asyncio.Barrier(TESTS)
        return await asyncio.gather(*(asyncio.create_task(one_test(n, all_running, seen)) for n in range(TESTS)))

    assert asyncio.run(run()) == [True] * TESTS
    assert seen == {n: {f"test_{n}"} for n in range(TESTS)}
