"""Every place we touch browser-use's (or cdp_use's, bubus's) private members or patch it, each with why.

Read this module (and agent/adapter/env.py) when upgrading browser-use: each item names what it relies on.
1. The environment browser-use reads when first imported: set in agent/adapter/env.py, which agent/__init__.py
   imports before any module of the package, since browser-use is imported only when a test first needs the agent.
2. `ContextSession` (agent/adapter/context_session.py): browser-use's session with three private methods overridden and
   two private attributes touched.
3. `VerifiedLLM`: the private flag that spares a wrapped chat model browser-use's API-key check.
4. `route_screenshots`: cdp_use's `CDPClient.send_raw`, wrapped for the whole process (by `apply`), so that every
   screenshot browser-use takes can be masked (agent/guards/masking.py), by the browser context its connection is kept to.
5. `apply`: `AboutBlankWatchdog._show_dvd_screensaver_loading_animation_cdp` replaced before any browser-use session
   starts (agent/adapter/connect.py applies it as it is imported), so that no test's first page fetches browser-use's
   logo from its CDN; and `PopupsWatchdog.on_TabCreatedEvent`, so that browser-use answers no dialog
   (agent/evidence/dialogs.py answers every one, one way, on purpose).
6. `MeteredChatBrowserUse`: the browser-use cloud's chat class with its private `_make_request` wrapped, so that every
   answer's tokens are counted.
7. `ScopedSessionManager`: browser-use's `SessionManager`, replaced in its module by `apply`, which keeps a
   `ContextSession`'s connection to its test's browser context (agent/browsers/context_scope.py) before its first command: the
   connection's `send_raw` and its private `_event_registry.handle_event` are wrapped on that one client.
8. `own_event_buses`: bubus (browser-use's event bus) runs every handler of every bus of the process under one lock,
   its private `_get_global_lock`, and a handler that awaits an event runs the queued events of every bus in
   `EventBus.all_instances`; so the sessions of concurrent tests took turns, each action waiting for the others'.
   `apply` replaces both in bubus: each test's session has a lock of its own and sees only its own buses, as a
   browser-use script with one session does.
9. `claude_check_without_its_sdk`: browser-use's Agent imports `browser_use.llm.anthropic.chat` as it is made, only to
   ask whether its LLM is a `ChatAnthropic` (for its system prompt); ours never is, it is our wrapper (agent/adapter/llm.py),
   so that import only cost an agent test on another provider the Anthropic SDK's (about 0.9 s of CPU, all of it on
   the test's start). While an agent is made, that module is a placeholder unless it is loaded already (a run on
   Anthropic's API loads it with its client, before any agent is made).
10. `apply`: browser-use's `Agent.close` ends with a full garbage collection (`gc.collect()`, through the module's `gc`),
   the end of a script's one agent; in our process it held the run's event loop, every concurrent test's browser
   messages with it, for about 0.1 s at each test's end. `apply` gives that module a `gc` whose `collect` leaves it to
   Python's own collector, which still runs by its thresholds.
11. `apply`: browser-use's `Agent` makes four pydantic models for its actions and its answer as it starts, and again
   before every step (its private `_setup_action_models` and `_update_action_models_for_page`), only so that actions
   restricted to some domains come and go with the page; and its chat classes make each model's JSON schema for every
   request (`SchemaOptimizer.create_optimized_json_schema`). Both were about a fifth of the Python a concurrent run
   does on its one thread. The models are now made once for what they are made of (each action's name, description,
   domains and parameters, and the page's URL only if an action is restricted to domains), and every agent of the
   process with the same actions and answer model takes them (each agent test made them anew as it started: about 80
   ms by py-spy's samples, 12 to 40 ms of CPU in turns with the code before); a model's schema is made once (a copy
   each request).
12. `apply`: bubus checks each handler's result against its event's result type through a pydantic `TypeAdapter` it
   makes anew for every result (`EventResult.update`, through its module's `TypeAdapter`), building the type's
   validator each time: about a sixth of the Python on the run's one thread with 4 agent tests at once. Its module now
   gets one adapter per type, made once (a type that cannot be a key gets a new one, as before).
13. `apply`: pydantic (2.13) asks `inspect.signature` whether a private attribute's default factory takes the
   validated data, for every private attribute of every model made (`_fields.takes_validated_data_argument`), and a
   browser-use session makes its watchdogs, a dozen models with many of them, as it starts: a builtin's signature is
   parsed from text each time. The answer depends on the factory alone, so it is asked once a factory.
"""

from __future__ import annotations

import collections
import contextlib
import copy
import functools
import gc
import sys
import threading
import types
import weakref
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Any

from browser_use.agent import service as agent_service
from browser_use.browser import session_manager
from browser_use.browser.watchdogs.aboutblank_watchdog import AboutBlankWatchdog
from browser_use.browser.watchdogs.popups_watchdog import PopupsWatchdog
from browser_use.llm.browser_use.chat import ChatBrowserUse
from browser_use.llm.schema import SchemaOptimizer
from bubus import models as bubus_models
from bubus import service as bubus_service
from bubus.service import EventBus, ReentrantLock
from cdp_use import CDPClient
from pydantic import BaseModel, TypeAdapter
from pydantic._internal import _fields as pydantic_fields

from preview_qa.agent.adapter.context_session import ContextSession
from preview_qa.agent.browsers.context_scope import ContextScope
from preview_qa.agent.guards import masking
from preview_qa.agent.guards.masking import Around

SCREENSHOT = "Page.captureScreenshot"


class VerifiedLLM:
    """3. A base for our chat-model wrapper (agent/adapter/llm.py): browser-use's Agent checks the private `_verified_api_keys`
    flag before its API-key check; our providers are checked once per run (providers.py), not once per test."""

    _verified_api_keys = True


_SCOPED: weakref.WeakKeyDictionary[CDPClient, str] = weakref.WeakKeyDictionary()  # connection -> its context id


def connection_key(client: CDPClient) -> str:
    """What a connection's screenshots are masked by: the browser context it is kept to, else its URL."""
    return _SCOPED.get(client, client.url)


def route_screenshots(around: Callable[[str], Around | None]) -> None:
    """4. Wrap cdp_use's one way out to the browser once per process: every CDP client browser-use makes, also the one
    made when it reconnects, sends through `CDPClient.send_raw`, so no screenshot path (watchdog, take_screenshot,
    actor) is missed. A screenshot over a connection (by `connection_key`) for which `around` gives a wrapper goes
    through it; everything else is sent as it was."""
    original = CDPClient.send_raw
    if getattr(original, "masks_screenshots", False):
        return

    async def send_raw(self: CDPClient, method: str, params: Any | None = None, session_id: str | None = None) -> Any:
        wrap = around(connection_key(self)) if method == SCREENSHOT else None
        if wrap is None:
            return await original(self, method, params, session_id)

        async def send(name: str, args: dict[str, Any] | None) -> dict[str, Any]:
            return await original(self, name, args, session_id)

        return await wrap(send, lambda: original(self, method, params, session_id))

    send_raw.masks_screenshots = True  # type: ignore[attr-defined]
    CDPClient.send_raw = send_raw  # type: ignore[method-assign]


async def _no_loading_animation(self: AboutBlankWatchdog, target_id: Any, browser_session_label: str) -> None:
    """5. browser-use draws a loading animation on every about:blank tab, whose logo comes from its CDN
    (cf.browser-use.com): one request per test from the user's CI to a third party, which a locked-down runner
    refuses. A test's first page stays blank until the agent's first navigation instead."""


async def on_TabCreatedEvent(self: PopupsWatchdog, event: Any) -> None:  # browser-use finds it by this name
    """5. browser-use's popups watchdog answers every dialog over CDP the moment it opens (a prompt always with Cancel),
    racing ours (agent/evidence/dialogs.py); every session in this process is ours, so its tab hook does nothing. Its name is
    browser-use's: its event bus registers a handler by the function's own name."""


class MeteredChatBrowserUse(ChatBrowserUse):
    """6. The browser-use cloud's chat model, telling `on_answer` each answer's parsed JSON as its private `_make_request`
    (one HTTP call, browser-use's own) returns it: the class builds a new httpx client per call, which takes no hook,
    and drops the usage of an answer whose output it cannot validate, which the cloud bills all the same."""

    def __init__(self, *, on_answer: Callable[[Any], None], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.on_answer = on_answer

    async def _make_request(self, payload: dict[str, Any]) -> dict[str, Any]:
        answer: dict[str, Any] = await super()._make_request(payload)
        self.on_answer(answer)
        return answer


class ScopedSessionManager(session_manager.SessionManager):
    """7. browser-use's session manager, which attaches to every target of the browser it is connected to. For a
    `ContextSession` the connection is first kept to the test's browser context (agent/browsers/context_scope.py): what
    browser-use then lists, attaches, focuses or closes is of that context only, and browser-wide commands are scoped
    to it or refused. Any other session (the pool's launcher, with no test in its browser) is browser-use's own."""

    async def start_monitoring(self) -> None:
        session, client = self.browser_session, self.browser_session._cdp_client_root
        if isinstance(session, ContextSession) and session._context_id is not None and client is not None:
            _keep_to(client, session._context_id, session._refused)
        await super().start_monitoring()


def _keep_to(client: CDPClient, context_id: str, refused: list[str]) -> None:
    """Every command of `client` through a ContextScope, and every event it hears; the scope sends with the client's
    own send_raw (the screenshot masking of item 4 included)."""
    own = client.send_raw
    scope = ContextScope(context_id, lambda method, params, session_id: own(method, params, session_id), refused=refused)

    async def send_raw(method: str, params: Any | None = None, session_id: str | None = None) -> dict[str, Any]:
        return await scope.command(method, params, session_id)

    registry = client._event_registry
    handle = registry.handle_event

    async def handle_event(method: str, params: Any, session_id: str | None = None) -> bool:
        return await handle(method, params, session_id) if scope.event(method, params or {}) else True

    client.send_raw = send_raw  # type: ignore[method-assign]
    registry.handle_event = handle_event  # type: ignore[method-assign]
    _SCOPED[client] = context_id


_ANTHROPIC_CHAT = "browser_use.llm.anthropic.chat"


class _NotClaude:
    """Nothing is an instance of it: what browser-use's check answers for our wrapper anyway."""


@contextlib.contextmanager
def claude_check_without_its_sdk() -> Iterator[None]:
    """9. browser-use's Agent made meanwhile finds the placeholder, unless the real module is loaded."""
    if _ANTHROPIC_CHAT in sys.modules:
        yield
        return
    placeholder = types.ModuleType(_ANTHROPIC_CHAT)
    placeholder.ChatAnthropic = _NotClaude  # type: ignore[attr-defined]
    sys.modules[_ANTHROPIC_CHAT] = placeholder
    try:
        yield
    finally:
        if sys.modules.get(_ANTHROPIC_CHAT) is placeholder:
            del sys.modules[_ANTHROPIC_CHAT]


# One test's event buses (its session's and its agent's, all made in that test's task) share a lock of their own, which
# also tells them from other tests' buses; None: bubus's own lock, shared by every bus made outside a test.
_group_lock_of_task: ContextVar[ReentrantLock | None] = ContextVar("preview_qa_bus_lock", default=None)
_everyones_lock = bubus_service._get_global_lock


def own_event_buses() -> None:
    """8. The buses made from now on in the calling task (and the tasks it starts) are a group of their own: a lock
    of their own, and they see no other group's buses."""
    _group_lock_of_task.set(ReentrantLock())


def _group_lock() -> ReentrantLock:
    lock = _group_lock_of_task.get()
    return _everyones_lock() if lock is None else lock


class _GroupedBuses(weakref.WeakSet[EventBus]):
    """bubus's registry of every bus, as each group sees it when it walks it: its own buses only."""

    def __init__(self, buses: weakref.WeakSet[EventBus]) -> None:
        self._lock_of: weakref.WeakKeyDictionary[EventBus, ReentrantLock | None] = weakref.WeakKeyDictionary()
        super().__init__(buses)

    def add(self, item: EventBus) -> None:
        self._lock_of.setdefault(item, _group_lock_of_task.get())
        super().add(item)

    def __iter__(self) -> Iterator[EventBus]:
        lock = _group_lock_of_task.get()
        return (bus for bus in super().__iter__() if self._lock_of.get(bus) is lock)


class _NoFullCollection(types.ModuleType):
    """10. The `gc` browser-use's agent module sees: Python's, but for `collect`."""

    def __getattr__(self, name: str) -> Any:
        return getattr(gc, name)

    @staticmethod
    def collect(generation: int = 2) -> int:
        return 0


_STEP_MODELS = ("ActionModel", "AgentOutput", "DoneActionModel", "DoneAgentOutput")
_setup_action_models = agent_service.Agent._setup_action_models
_update_action_models_for_page = agent_service.Agent._update_action_models_for_page
_optimized_schema = SchemaOptimizer.create_optimized_json_schema
_schemas: weakref.WeakKeyDictionary[type, dict[tuple[bool, bool], dict[str, Any]]] = weakref.WeakKeyDictionary()
MODELS_KEPT = 32  # sets of step models, the most recently used: one a distinct answer model (a test's output_schema)
_made: collections.OrderedDict[tuple[object, ...], list[type[Any]]] = collections.OrderedDict()
_made_lock = threading.Lock()  # a process may run its runs on threads of their own (the MCP server)
_param_shapes: weakref.WeakKeyDictionary[type, tuple[object, ...]] = weakref.WeakKeyDictionary()


def _params_shape(model: type[BaseModel]) -> tuple[object, ...]:
    """An action's parameters by what they accept: browser-use makes some anew for each agent's tools, from the action
    function's signature (`wait_Params`, `read_file_Params`: the same fields each time); a class in a field is itself
    (two tests' answer models with different `data` are two keys)."""
    shape = _param_shapes.get(model)
    if shape is None:
        fields = tuple((name, f.annotation, repr(f)) for name, f in model.model_fields.items())
        shape = _param_shapes[model] = (model.__name__, model.__bases__, fields)
    return shape


def _models_key(agent: agent_service.Agent, page_url: str | None) -> tuple[object, ...] | None:
    """11. What an agent's step models are made of: its registry's actions (each one's name, description, domains and
    parameters) and, only if one is kept to some domains, the page's URL; None if a part cannot be a key."""
    actions = agent.tools.registry.registry.actions
    by_page = any(action.domains for action in actions.values())
    settings = agent.settings
    key: tuple[object, ...] = (settings.flash_mode, settings.use_thinking, page_url if by_page else None)
    try:
        key += tuple((name, a.description, tuple(a.domains or ()), _params_shape(a.param_model)) for name, a in actions.items())
        hash(key)
    except TypeError:  # a parameter typed by something unhashable
        return None
    return key


def _made_before(agent: agent_service.Agent, key: tuple[object, ...] | None) -> bool:
    """Give `agent` the step models made for `key` before (by any agent of the process), if any were."""
    if key is None:
        return False
    with _made_lock:
        models = _made.get(key)
        if models is not None:
            _made.move_to_end(key)
    if models is None:
        return False
    for name, model in zip(_STEP_MODELS, models, strict=True):
        setattr(agent, name, model)
    return True


def _keep_models(agent: agent_service.Agent, key: tuple[object, ...] | None) -> None:
    if key is not None:
        with _made_lock:
            _made[key] = [getattr(agent, name) for name in _STEP_MODELS]
            while len(_made) > MODELS_KEPT:
                _made.popitem(last=False)


def _setup_once(agent: agent_service.Agent) -> None:
    key = _models_key(agent, None)
    if not _made_before(agent, key):
        _setup_action_models(agent)
        _keep_models(agent, key)


async def _update_if_changed(agent: agent_service.Agent, page_url: str) -> None:
    key = _models_key(agent, page_url)
    # the models made before: also undoes a forced last step's answer model, as browser-use's remake does
    if not _made_before(agent, key):
        await _update_action_models_for_page(agent, page_url)
        _keep_models(agent, key)


def _schema_once(model: type[Any], *, remove_min_items: bool = False, remove_defaults: bool = False) -> dict[str, Any]:
    made = _schemas.setdefault(model, {})
    flags = (remove_min_items, remove_defaults)
    if flags not in made:
        made[flags] = _optimized_schema(model, remove_min_items=remove_min_items, remove_defaults=remove_defaults)
    return copy.deepcopy(made[flags])


@functools.lru_cache(maxsize=512)
def _adapter_once(result_type: Any) -> TypeAdapter[Any]:
    return TypeAdapter(result_type)


def _type_adapter(result_type: Any) -> TypeAdapter[Any]:
    """12. bubus's TypeAdapter for a handler's result: one a type."""
    try:
        return _adapter_once(result_type)
    except TypeError:  # unhashable
        return TypeAdapter(result_type)


_takes_validated_data = pydantic_fields.takes_validated_data_argument


@functools.lru_cache(maxsize=4096)
def _takes_validated_data_once(default_factory: Any) -> bool:
    return bool(_takes_validated_data(default_factory))


def _takes_validated_data_asked_once(default_factory: Any) -> bool:
    """13. pydantic's question of a default factory, answered once a factory."""
    try:
        return _takes_validated_data_once(default_factory)
    except TypeError:  # unhashable
        return bool(_takes_validated_data(default_factory))


_applied = False


def apply() -> None:
    """The class patches above that change behaviour for the whole process; once, before browser-use's first session."""
    global _applied
    if not _applied:
        AboutBlankWatchdog._show_dvd_screensaver_loading_animation_cdp = _no_loading_animation  # type: ignore[method-assign]
        PopupsWatchdog.on_TabCreatedEvent = on_TabCreatedEvent  # type: ignore[method-assign]
        session_manager.SessionManager = ScopedSessionManager  # type: ignore[misc]
        EventBus.all_instances = _GroupedBuses(EventBus.all_instances)
        bubus_service._get_global_lock = _group_lock
        agent_service.gc = _NoFullCollection("gc")
        agent_service.Agent._setup_action_models = _setup_once  # type: ignore[method-assign,assignment]
        agent_service.Agent._update_action_models_for_page = _update_if_changed  # type: ignore[method-assign,assignment]
        SchemaOptimizer.create_optimized_json_schema = staticmethod(_schema_once)  # type: ignore[method-assign]
        bubus_models.TypeAdapter = _type_adapter
        pydantic_fields.takes_validated_data_argument = _takes_validated_data_asked_once  # type: ignore[assignment]
        route_screenshots(masking.around)
        _applied = True
