"""Reporters subscribe to the runner's events; each turns them into one kind of output."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from types import TracebackType

from preview_qa.events import Event
from preview_qa.results import error_line

log = logging.getLogger(__name__)


class Reporter:
    """One kind of output. `start` before the first event, `handle` every event in order (RunStarted first and
    RunFinished last), `finish` once at the end whatever happened. A reporter never changes an event: others read it."""

    @property
    def name(self) -> str:
        return type(self).__name__

    def start(self) -> None:
        """Before anything is published."""

    def handle(self, event: Event) -> None:
        """One event; the base ignores everything."""

    def finish(self) -> None:
        """After the last event, also when the run broke off."""


class Dispatcher:
    """Drives every reporter through start / handle / finish. A reporter that breaks is reported once and skipped
    afterwards (it is still finished); `broken` names each one, so the run can fail for its missing output."""

    def __init__(self, reporters: Iterable[Reporter]):
        self.reporters = list(reporters)
        self.broken: dict[str, str] = {}

    def start(self) -> None:
        for reporter in self.reporters:
            self._call(reporter, reporter.start)

    def __call__(self, event: Event) -> None:
        for reporter in self.reporters:
            if reporter.name not in self.broken:
                self._call(reporter, reporter.handle, event)

    def finish(self) -> None:
        for reporter in self.reporters:
            self._call(reporter, reporter.finish)

    def __enter__(self) -> Dispatcher:
        self.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.finish()

    def _call(self, reporter: Reporter, step: Callable[..., None], *args: Event) -> None:
        try:
            step(*args)
        except Exception as e:
            self.broken.setdefault(reporter.name, f"{type(e).__name__}: {error_line(e)}")
            log.error("reporter %s failed and was switched off: %s", reporter.name, self.broken[reporter.name])
