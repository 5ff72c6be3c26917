"""What a test tells its fixture pages: a page that moves (a save that fails later, a session that expires) does so
when the test says, never after a wall-clock delay. `Signals` holds the named signals a site's handlers wait on;
`SignallingLLM` is the scripted LLM that gives one each time it serves a scenario's `done` turn, so that a page moves
once the agent has finished, before the final page is judged."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from preview_qa.demo.scripted_llm import ScriptedLLM, Turn


class Signals:
    """Named one-shot signals: `give(name)` releases every request waiting on `name`, now and later."""

    def __init__(self, stop: threading.Event) -> None:
        self._stop = stop  # the site's: a waiting request gives up when the site stops
        self._given: dict[str, threading.Event] = {}
        self._lock = threading.Lock()

    def _event(self, name: str) -> threading.Event:
        with self._lock:
            return self._given.setdefault(name, threading.Event())

    def give(self, name: str) -> None:
        self._event(name).set()

    def given(self, name: str) -> bool:
        """Whether `name` was given (a page that answers otherwise from then on asks, never waits)."""
        return self._event(name).is_set()

    def wait(self, name: str) -> bool:
        """Wait for `name` (polling only the site's stop, a tenth of a second apart); False if the site stopped."""
        event = self._event(name)
        while not event.wait(0.1):
            if self._stop.is_set():
                return False
        return True


class SignallingLLM(ScriptedLLM):
    """The scripted LLM, calling `on_done(scenario name)` as it answers that scenario's `done` turn (before the answer
    is sent: what the agent does next, the page will already have been told)."""

    def __init__(self, *args: Any, on_done: Callable[[str], None], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._on_done = on_done

    def plan(self, body: dict[str, Any], path: str) -> tuple[Turn, dict[str, Any]]:
        turn, call = super().plan(body, path)
        if "done" in turn and call["scenario"]:
            self._on_done(str(call["scenario"]))
        return turn, call
