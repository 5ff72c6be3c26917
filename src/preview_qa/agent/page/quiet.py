"""The settle rule's bookkeeping, pure: a page is settled once nothing it waits on is in flight (a request, a navigation,
the answer to the action's WebSocket message), its content has rendered, it no longer says it is busy, and it has
stopped changing for a quiet window; its polls and what they draw do not count."""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from enum import StrEnum

QUIET_S = 0.5  # how long a page must stay quiet: an app's next request (or render) usually follows its last within this
COUNTED = frozenset({"document", "fetch", "xhr"})  # what an app waits on; never websocket or eventsource (they stay open)
LATE = frozenset({"script"})  # counted once the document has loaded: code an app splits off and fetches to draw more
POLL_REPEATS = 3  # a request repeated this often (same method, path and body), each a moment apart, is a poll
POLL_GAP_S = 0.2  # starts closer than this are a burst (ten items fetched at once), not a timer
DRAWN_BY_ANSWER_S = (0.05, 0.3)  # a change this long before or after a request's answer is that answer's drawing
PAGE, ACTION, DRAWING, SOCKET = "the page loading", "the last action", "the page's drawing", "a WebSocket's messages"
SESSION = "a new WebSocket's messages"  # a socket opened since the last action: an app's session streaming its page
# A new socket's server may pause mid-stream: a cold Streamlit script runs 1 s between two widgets, over 1.5 s on a busy
# 2-core machine (one first step of 10 saw half the app with 1.5 s); paid only by pages whose socket opened since the last action
SESSION_QUIET_S = 3.0
UNRENDERED = "the page's content to render"
# An action's message on a socket the page opened earlier (Panel, LiveView, Blazor Server) is waited on for its answer.
ANSWER = "the answer on WebSocket"
REPLY_S = 0.2  # a frame sent this soon after one received on that socket replies to it (Blazor's render ack): asks nothing
ANSWER_LAG_S = 0.3  # on a busy machine Playwright tells of a received frame this much after the page drew it
# The first frame back may only acknowledge the message (Panel's OK; its patch comes when the callback ends): the answer
# has this long after it to arrive, drawn or not (on a canvas, or in a closed shadow root, no look sees it change)
ANSWER_FOLLOW_S = 1.5
BUSY_WAIT = "the page to stop saying it was busy"
NAME_LIMIT = 60  # characters of a busy element's name kept for the report


class Announced(StrEnum):
    """How a visible element of the page says that work is in progress, by the platform's own semantics."""

    BUSY = "busy"  # aria-busy="true"
    INDETERMINATE = "indeterminate"  # a progressbar without aria-valuenow, a <progress> without a value
    MOVING = "moving"  # a progress value set within the last second, short of its maximum


@dataclass(frozen=True)
class Busy:
    """One visible element announcing work in progress: how, what it is (`progressbar`, `<progress>`, `<section>`) and
    its accessible name or first line of text ("" if none)."""

    how: Announced
    what: str
    name: str = ""

    def label(self) -> str:
        """`progressbar 'Processing payment…'`, `<section> 'Results' (aria-busy="true")`: for reasons and events."""
        name = self.name if len(self.name) <= NAME_LIMIT else self.name[: NAME_LIMIT - 1].rstrip() + "…"
        said = f"{self.what} '{name}'" if name else self.what
        if self.how is Announced.MOVING:
            return f"{said} (its value still changing)"
        return f'{said} (aria-busy="true")' if self.how is Announced.BUSY else said


class Settling(StrEnum):
    """Where a page stands against the settle rule."""

    SETTLED = "settled"  # nothing in flight, content rendered, no change (but its polls') for the whole quiet window
    BUSY = "busy"  # a request in flight, a navigation or a socket pending, no content yet, or still changing
    BOUND_REACHED = "bound reached"  # still busy when the bound ran out: the page is judged as it is


@dataclass
class _Socket:
    label: str
    opened: float
    answered: bool = False  # its first message arrived
    heard: float | None = None  # its latest message since the last action
    asked: float | None = None  # when the action's message was sent on it, while its answer is awaited
    back: float | None = None  # the first message received since `asked`

    def awaiting(self, now: float | None) -> bool:
        """Whether the action's message still awaits its answer at `now` (None: whenever, the follow window aside)."""
        late = now is not None and self.back is not None and now >= self.back + ANSWER_FOLLOW_S
        return self.asked is not None and not late


@dataclass
class QuietRule:
    """What a page is doing, fed by the page's events (requests by any key, each with a label such as "POST /api/save"
    and a repeat key of its method, path and body; WebSocket frames; DOM changes; whether its main content shows) and
    by the test's actions; times are the caller's clock in seconds, so the rule is tested without a browser."""

    quiet_s: float = QUIET_S
    last_activity: float = 0.0  # the page's start: every later activity is kept by its source in `activity`
    in_flight: dict[Hashable, tuple[str, float, bool, str]] = field(default_factory=dict)  # key -> (label, start, doc?, repeat)
    navigation: str | None = None  # the URL of a main-frame navigation not yet loaded
    loaded_at: float | None = None  # when the current document fired its load event
    last_action: float = 0.0  # the test's last action on the page (a click, a navigation): what settling follows
    shown: bool | None = None  # whether the main content shows something (None: not known, never read)
    activity: dict[str, float] = field(default_factory=dict)  # source (a request's repeat key, DRAWING, ...) -> last time
    starts: dict[str, list[float]] = field(default_factory=dict)  # repeat key -> its starts in this document
    answers: dict[str, list[tuple[float, float]]] = field(default_factory=dict)  # repeat key -> (start, answer) of each
    sockets: dict[Hashable, _Socket] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)  # repeat key -> a request's label, for the report
    waited_on: dict[str, float] = field(default_factory=dict)  # label -> seconds it was waited on during a settle
    polls_seen: set[str] = field(default_factory=set)  # the polls a settle did not wait for (labels)
    moved: bool = False  # a settle waited on a new document: the page it judges is another than the agent left
    drawn_at: float | None = None  # when the DOM last changed
    judged: bool = False  # a settle has ended since the last action: later messages are the page's own, not the action's
    busy: tuple[str, ...] = ()  # what the page said was work in progress at the last look (Busy labels)
    _free_since: float | None = None  # during a settle, since when the page has waited on nothing (it may still change)

    def started(self, key: Hashable, label: str, resource_type: str, now: float, repeat: str = "") -> None:
        """A request of the page started; documents, fetches and XHRs count, and scripts fetched after the load.
        `repeat` is its method, path and body (its label when not given): the same one three times is a poll."""
        if resource_type not in COUNTED and not (resource_type in LATE and self.loaded_at is not None):
            return
        repeat = repeat or label
        self.in_flight[key] = (label, now, resource_type == "document", repeat)
        self.labels[repeat] = label
        starts = self.starts.setdefault(repeat, [])
        if not starts or now - starts[-1] >= POLL_GAP_S:
            starts.append(now)
            del starts[:-POLL_REPEATS]  # enough to tell a poll: a page that polls for an hour keeps no more
        self._active(repeat, now)

    def finished(self, key: Hashable, now: float) -> None:
        """A request was answered, failed or was cancelled."""
        flight = self.in_flight.pop(key, None)
        if flight is not None:
            _, start, _, repeat = flight
            self.answers.setdefault(repeat, []).append((start, now))
            del self.answers[repeat][:-3]  # the latest few tell whether a change is an answer's drawing
            self._active(repeat, now)

    def leaving(self) -> None:
        """The main frame asked for a new document: its requests are counted afresh (a poll of the last document is
        not one of the next one's until it repeats there)."""
        self.starts.clear()
        self.answers.clear()

    def navigating(self, url: str, now: float) -> None:
        """The main frame's new document arrived; it is pending until its load event."""
        self.navigation, self.loaded_at = url, None
        self._active(PAGE, now)

    def loaded(self, now: float) -> None:
        """The main frame's document fired its load event."""
        self.loaded_at = now
        if self.navigation is not None:
            self.navigation = None
            self._active(PAGE, now)

    def acted(self, now: float) -> None:
        """The test acted on the page (the agent's or a replay's action): what follows is the action's doing."""
        self.last_action, self.judged = now, False
        for socket in self.sockets.values():
            socket.heard = socket.asked = socket.back = None
        self._active(ACTION, now)

    def socket_opened(self, key: Hashable, label: str, now: float) -> None:
        """A WebSocket opened; one opened since the last action is pending until its first message arrives."""
        self.sockets[key] = _Socket(label, now)
        self._active(SOCKET, now)

    def socket_message(self, key: Hashable, now: float) -> None:
        """A WebSocket received a message: the app has something new to draw (the answer to the action's message, once
        the page draws it)."""
        socket = self.sockets.get(key)
        if socket is not None:
            socket.answered, socket.heard = True, now
            if socket.asked is not None and socket.back is None:
                socket.back = now
            self._drawn_answer(socket)
            self._active(SESSION if socket.opened >= self.last_action else SOCKET, now)

    def socket_sent(self, key: Hashable, now: float) -> None:
        """The page sent a message on a WebSocket. On one it opened before the last action, sent since that action
        (before a settle judged it) and replying to nothing just received, it is the action's: its answer is awaited."""
        socket = self.sockets.get(key)
        if socket is None or socket.opened >= self.last_action or self.judged or socket.awaiting(now):
            return
        if socket.heard is not None and now - socket.heard < REPLY_S:
            return
        socket.asked, socket.back = now, None

    def socket_closed(self, key: Hashable, now: float) -> None:
        if self.sockets.pop(key, None) is not None:
            self._active(SOCKET, now)

    def drew(self, at: float) -> None:
        """The page's DOM changed at `at`: the drawing of a request's answer when it follows one, else of the page."""
        before, after = DRAWN_BY_ANSWER_S
        source = next(
            (repeat for repeat, times in self.answers.items() if any(t - before <= at <= t + after for _, t in times)),
            DRAWING,
        )
        self.drawn_at = max(self.drawn_at or at, at)
        for socket in self.sockets.values():
            self._drawn_answer(socket)
        self._active(source, at)

    def _drawn_answer(self, socket: _Socket) -> None:
        """The page drew after the action's message and (at most ANSWER_LAG_S before we hear of it) a message back: the
        answer has arrived."""
        drawn, asked, back = self.drawn_at, socket.asked, socket.back
        if drawn is not None and asked is not None and back is not None and drawn >= max(asked, back - ANSWER_LAG_S):
            socket.asked = socket.back = None

    def content(self, shown: bool) -> None:
        """Whether the page's main content (its <main>, else its body) shows any text or element now."""
        self.shown = shown

    def announced(self, busy: list[Busy], now: float) -> None:
        """What the page says is work in progress now (none: it says nothing of the kind); while it says so, the page
        is waited for, whatever its network and DOM do (a server computing over a socket, a worker)."""
        labels = tuple(dict.fromkeys(b.label() for b in busy))
        if labels != self.busy:
            self._active(DRAWING, now)
        self.busy = labels

    def is_poll(self, repeat: str) -> bool:
        return len(self.starts.get(repeat, ())) >= POLL_REPEATS

    def quiet_at(self) -> float:
        """When the page will have been quiet for its window since it last did anything that counts (its polls, and
        what their answers drew, do not): a new session's socket has a longer window."""
        return max(
            [
                self.last_activity + self.quiet_s,
                *(t + self._window(source) for source, t in self.activity.items() if not self.is_poll(source)),
            ]
        )

    def waiting_on(self, now: float | None = None) -> list[str]:
        """What the page is still waiting on at `now`, by label: requests (a poll only until one of its answers since the
        last action), a navigation, a WebSocket opened since the last action and not answered, the answer to the
        action's message on an older one, content not rendered."""
        waits = [label for label, _, _, repeat in self.in_flight.values() if not self._poll_done(repeat)]
        if self.navigation is not None:
            waits.append(f"navigation to {self.navigation}")
        waits += [f"WebSocket {s.label}" for s in self.sockets.values() if s.opened >= self.last_action and not s.answered]
        waits += [f"{ANSWER} {s.label}" for s in self.sockets.values() if s.awaiting(now)]
        if self.shown is False:
            waits.append(UNRENDERED)
        waits += [f"{BUSY_WAIT} ({label})" for label in self.busy]
        return list(dict.fromkeys(waits))

    def state(self, now: float, since: float, bound_s: float, restless_s: float | None = None) -> Settling:
        """Where the page stands at `now`, for a settle that began at `since` and may last `bound_s` seconds (and, for a
        page that has waited on nothing for `restless_s` and still changes, no longer)."""
        waits = self.waiting_on(now)
        if not waits and now >= self.quiet_at():
            return Settling.SETTLED
        return Settling.BOUND_REACHED if now - since >= bound_s or self._restless(now, restless_s) else Settling.BUSY

    def _restless(self, now: float, restless_s: float | None) -> bool:
        """The page has waited on nothing for `restless_s` and still changes: a ticking clock. A page merely sitting out
        a long quiet window (a new session's socket) is not restless."""
        free = self._restless_from()
        if restless_s is None or free is None or now - free < restless_s:
            return False
        return any(t > now - self.quiet_s for source, t in self.activity.items() if not self.is_poll(source))

    def note_waits(self, now: float, since: float) -> None:
        """Remember, for the report, how long each wait has lasted since `since`, and the polls not waited for."""
        started = {label: start for label, start, _, _ in self.in_flight.values()}
        started |= {f"{ANSWER} {s.label}": s.asked for s in self.sockets.values() if s.asked is not None}
        waits = self.waiting_on(now)
        for label in waits:
            self.waited_on[label] = max(self.waited_on.get(label, 0.0), now - max(started.get(label, since), since))
        for _, _, document, repeat in self.in_flight.values():
            self.moved = self.moved or (document and not self._poll_done(repeat))
        self.moved = self.moved or self.navigation is not None
        self.polls_seen |= {self.labels.get(repeat, repeat) for repeat in self.starts if self.is_poll(repeat)}
        self._note_changing(now, bool(waits))

    def _note_changing(self, now: float, waiting: bool) -> None:
        """A page that waits on nothing and still changes past a quiet window: its latest change is what settling
        waited for, since the moment it stopped waiting on anything else."""
        if waiting:
            self._free_since = None
            return
        self._free_since = now if self._free_since is None else self._free_since
        changing = now - self._free_since
        if now < self.quiet_at() and changing >= self.quiet_s:
            latest = self._latest_source()
            label = self.labels.get(latest, latest)
            self.waited_on[label] = max(self.waited_on.get(label, 0.0), changing)

    def longest_waits(self, count: int = 3) -> list[str]:
        """The labels waited on longest, most first: what settling waited for."""
        return [label for label, _ in sorted(self.waited_on.items(), key=lambda kv: -kv[1])[:count]]

    def next_look(self, now: float, since: float, bound_s: float) -> float:
        """Seconds until the state could change by time alone (the quiet window or the bound ending)."""
        until_quiet = self.quiet_at() - now
        until_bound = bound_s - (now - since)
        return max(0.0, min(until_bound, until_quiet if until_quiet > 0 else until_bound))

    def idle_for(self, now: float, since: float, bound_s: float, restless_s: float | None = None) -> float | None:
        """Seconds in which, waiting on nothing, only time can settle the page: until its quiet window ends, the bound,
        or its restless limit (what it draws meanwhile only puts its window off); None while it waits on something."""
        if self.waiting_on(now):
            return None
        limits = [self.next_look(now, since, bound_s)]
        if restless_s is not None and (free := self._restless_from()) is not None:
            limits.append(free + restless_s - now)
        return max(0.0, min(limits))

    def start_settle(self) -> None:
        """A new settle begins: what the last one waited for is forgotten."""
        self.waited_on.clear()
        self.polls_seen.clear()
        self.moved, self._free_since = False, None

    def end_settle(self) -> None:
        """A settle has judged the page: an answer it gave up on is not waited for again, and the page's messages from
        now until the next action are its own (a heartbeat while the agent thinks), not the action's."""
        self.judged = True
        for socket in self.sockets.values():
            socket.asked = socket.back = None

    def _restless_from(self) -> float | None:
        """Since when the page has waited on nothing (as the looks saw it, note_waits) and fetched nothing but its polls:
        a request that starts and ends between two looks (an app's widget code, fetched piece by piece after its
        socket's messages) is work the page waits on, not a clock's ticking."""
        if self._free_since is None:
            return None
        fetched = [end for repeat, answers in self.answers.items() if not self.is_poll(repeat) for _, end in answers]
        return max([self._free_since, *fetched])

    def _poll_done(self, repeat: str) -> bool:
        """A poll has answered once since the last action: its next requests are not waited for."""
        return self.is_poll(repeat) and any(start >= self.last_action for start, _ in self.answers.get(repeat, ()))

    def _latest_source(self) -> str:
        counted = {source: t + self._window(source) for source, t in self.activity.items() if not self.is_poll(source)}
        return max(counted, key=lambda source: counted[source]) if counted else PAGE

    def _window(self, source: str) -> float:
        """A new session's socket has the long window, and so has what its page fetches and draws meanwhile (the app
        assembling its widgets from code it fetches after the socket's messages: compiling it takes over 0.5 s on a
        busy 2-core machine, and a first step saw Streamlit's title without its widgets); a poll's has none."""
        if source == SESSION or (source != SOCKET and any(s.opened >= self.last_action for s in self.sockets.values())):
            return max(self.quiet_s, SESSION_QUIET_S)
        return self.quiet_s

    def _active(self, source: str, now: float) -> None:
        self.activity[source] = max(self.activity.get(source, now), now)
