"""The settle rule's bookkeeping, pure: a page is settled once nothing it waits on is in flight for a quiet window."""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from enum import StrEnum

QUIET_S = 0.5  # how long a page must stay quiet: an app's next request usually follows its last answer within this
COUNTED = frozenset({"document", "fetch", "xhr"})  # what an app waits on; never websocket or eventsource (they stay open)


class Settling(StrEnum):
    """Where a page stands against the settle rule."""

    SETTLED = "settled"  # nothing in flight, no navigation pending, for the whole quiet window
    BUSY = "busy"  # a request in flight, a navigation pending, or the quiet window not yet over
    BOUND_REACHED = "bound reached"  # still busy when the bound ran out: the page is judged as it is


@dataclass
class QuietRule:
    """Requests in flight (by any key, each with a label such as "POST /api/save"), a pending navigation, and when the
    page last did something; times are the caller's clock in seconds, so the rule is tested without a browser."""

    quiet_s: float = QUIET_S
    last_activity: float = 0.0
    in_flight: dict[Hashable, tuple[str, float, bool]] = field(default_factory=dict)  # key -> (label, start, document?)
    navigation: str | None = None  # the URL of a main-frame navigation not yet loaded
    waited_on: dict[str, float] = field(default_factory=dict)  # label -> seconds it was waited on during a settle
    moved: bool = False  # a settle waited on a new document: the page it judges is another than the agent left

    def started(self, key: Hashable, label: str, resource_type: str, now: float) -> None:
        """A request of the page started; only documents, fetches and XHRs count."""
        if resource_type in COUNTED:
            self.in_flight[key] = (label, now, resource_type == "document")
            self.last_activity = now

    def finished(self, key: Hashable, now: float) -> None:
        """A request was answered, failed or was cancelled."""
        if self.in_flight.pop(key, None) is not None:
            self.last_activity = now

    def navigating(self, url: str, now: float) -> None:
        """The main frame committed to a new document; it is pending until its load event."""
        self.navigation, self.last_activity = url, now

    def loaded(self, now: float) -> None:
        """The main frame's document fired its load event."""
        if self.navigation is not None:
            self.navigation, self.last_activity = None, now

    def state(self, now: float, since: float, bound_s: float) -> Settling:
        """Where the page stands at `now`, for a settle that began at `since` and may last `bound_s` seconds."""
        busy = bool(self.in_flight) or self.navigation is not None or now - self.last_activity < self.quiet_s
        if not busy:
            return Settling.SETTLED
        return Settling.BOUND_REACHED if now - since >= bound_s else Settling.BUSY

    def note_waits(self, now: float, since: float) -> None:
        """Remember, for the report, how long each request still in flight has been waited on since `since`."""
        for label, started, document in self.in_flight.values():
            self.waited_on[label] = max(self.waited_on.get(label, 0.0), now - max(started, since))
            self.moved = self.moved or document
        if self.navigation is not None:
            self.moved = True
            label = f"navigation to {self.navigation}"
            self.waited_on[label] = max(self.waited_on.get(label, 0.0), now - since)

    def longest_waits(self, count: int = 3) -> list[str]:
        """The labels waited on longest, most first: what settling waited for."""
        return [label for label, _ in sorted(self.waited_on.items(), key=lambda kv: -kv[1])[:count]]

    def next_look(self, now: float, since: float, bound_s: float) -> float:
        """Seconds until the state could change by time alone (the quiet window or the bound ending)."""
        until_quiet = self.quiet_s - (now - self.last_activity)
        until_bound = bound_s - (now - since)
        return max(0.0, min(until_bound, until_quiet if until_quiet > 0 else until_bound))
