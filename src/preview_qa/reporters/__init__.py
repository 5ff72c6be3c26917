"""Reporters subscribe to the runner's events; each turns them into one kind of output."""

from __future__ import annotations

import logging
from collections.abc import Iterable

from preview_qa.events import Event

log = logging.getLogger(__name__)


class Reporter:
    """One kind of output. `handle` sees every event in order; RunStarted comes first and RunFinished last."""

    def handle(self, event: Event) -> None:  # pragma: no cover - the base ignores everything
        pass


class Dispatcher:
    """Passes each event to every reporter; a reporter that breaks is reported once and skipped afterwards."""

    def __init__(self, reporters: Iterable[Reporter]):
        self.reporters = list(reporters)
        self.broken: dict[str, str] = {}

    def __call__(self, event: Event) -> None:
        for reporter in self.reporters:
            name = type(reporter).__name__
            if name in self.broken:
                continue
            try:
                reporter.handle(event)
            except Exception as e:
                self.broken[name] = f"{type(e).__name__}: {e}"
                log.error("reporter %s failed and was switched off: %s", name, self.broken[name])
