"""Each agent step as a reviewer reads it: the element each action touched (role and name, and how the export's locator
finds it as the action runs), the actions browser-use dropped, the filled-in form before a submit, and the page once
it has settled (agent/page/settle.py's rule, as for the final page's checks)."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from preview_qa.agent.evidence.action_names import NAME_LIMIT, READS_ONLY, VERDICT
from preview_qa.agent.page.settle import PageSettler, Settled
from preview_qa.agent.replay.locate import located
from preview_qa.results import one_line

if TYPE_CHECKING:
    from browser_use import Agent
    from browser_use.agent.views import AgentOutput
    from browser_use.browser.views import BrowserStateSummary
    from browser_use.dom.views import EnhancedDOMTreeNode
    from browser_use.tools.registry.views import ActionModel
    from playwright.async_api import BrowserContext, Page

FILLS = frozenset({"input", "select_dropdown", "upload_file"})  # actions that put a value into a form
SUBMITS = frozenset({"click", "send_keys"})  # what may send a filled form off (a button, or Enter)
VAGUE_ROLES = frozenset({"generic", "none", "presentation", "StaticText", "LabelText"})
SETTLE_S = 5.0  # at most, per step, for what the step started (a navigation, a request, a socket) and its drawing
START_SETTLE_S = 10.0  # at most, before the first step: a cold app's first render (its code split in chunks) on a busy machine
RESTLESS_S = 1.5  # at most, per step, for a page that waits on nothing but never stops changing (a ticking clock)


@dataclass
class StepFacts:
    """What one step did: its actions as browser-use kept them, the element each one targets, the ones it dropped."""

    actions: list[dict[str, Any]]
    elements: list[dict[str, Any] | None]
    dropped: list[Dropped] = field(default_factory=list)
    form_png: bytes | None = None  # the page after the step's form was filled in, just before it was submitted
    form_at: float | None = None  # when it was taken (time.time())


@dataclass
class Dropped:
    """Actions the model asked for that never ran, and why."""

    why: str
    actions: list[dict[str, Any]]
    elements: list[dict[str, Any] | None]


@dataclass
class _Plan:
    step: int  # browser-use's step number (its history's metadata.step_number)
    url: str  # of the page the model answered
    answer: list[ActionModel]  # every action of the model's answer, before browser-use cut it to max_actions_per_step
    elements: list[dict[str, Any] | None]
    recorded: list[dict[str, Any] | None]  # each action's element as browser-use's history records it


class StepWatcher:
    """Hears the model's answers, the step's start and each action, so a step's record can name what it did; `acted`
    hears each action of a step (not browser-use's start navigation) with its element, before it runs."""

    def __init__(
        self,
        shoot: Callable[[], Awaitable[bytes | None]],
        settler: PageSettler,
        acted: Callable[[dict[str, Any], dict[str, Any] | None], None] = lambda action, element: None,
    ):
        self._shoot, self._settler, self._acted = shoot, settler, acted
        self._answer: list[ActionModel] = []
        self._plan: _Plan | None = None
        self._filled = False
        self._form_png: bytes | None = None
        self._form_at: float | None = None
        self._context: BrowserContext | None = None
        self.located: dict[tuple[int, int], dict[str, Any]] = {}  # (step, action's position) -> its locator's facts

    def heard(self, completion: Any) -> None:
        """Every LLM answer (RecordingLLM's `on_answer`): the agent's ones carry the full list of actions."""
        actions = getattr(completion, "action", None)
        if isinstance(actions, list):
            self._answer = list(actions)

    async def on_new_step(self, state: BrowserStateSummary, output: AgentOutput, n_steps: int) -> None:
        """browser-use's register_new_step_callback: the step's DOM and actions, before any of them runs."""
        kept = output.action
        answer = self._answer if self._answer and kept and self._answer[0] is kept[0] else list(kept)
        selector_map = state.dom_state.selector_map if state.dom_state else {}
        self._plan = _Plan(
            step=n_steps,
            url=state.url,
            answer=answer,
            elements=[element_facts(a.get_index(), selector_map) for a in answer],
            recorded=[_interacted(a.get_index(), selector_map) for a in answer],
        )
        self._filled, self._form_png = False, None

    async def before_action(self, action: ActionModel) -> None:
        """Tell `acted` of the action and how the export's locator finds its element now; a submit after the step
        filled a form in: photograph the filled form before it is sent. Settling follows what the action causes from
        here (one that only reads or reports changes nothing)."""
        await self._locate(action)
        if self._plan is not None:  # None: browser-use's start navigation, which no step chose
            index = action.get_index()
            self._acted(_dump(action), next((e for e in self._plan.elements if e and e["index"] == index), None))
        name = next(iter(action.model_dump(exclude_unset=True)), "")
        if name not in READS_ONLY | {VERDICT}:
            self._settler.acted()
        if name in FILLS:
            self._filled = True
        elif name in SUBMITS and self._filled and self._form_png is None:
            self._form_at, self._form_png = time.time(), await self._shoot()

    def facts(self, agent: Agent) -> StepFacts:
        """The step that just ended; its plan is used up."""
        plan, self._plan = self._plan, None
        item = agent.history.history[-1] if agent.history.history else None
        output = item.model_output if item else None
        kept = list(output.action) if output else []
        results = item.result if item else []
        if plan is None or plan.answer[: len(kept)] != kept:  # the step ended before its actions were planned
            return StepFacts(actions=[_dump(a) for a in kept], elements=[None] * len(kept))
        facts = StepFacts(
            actions=[_dump(a) for a in kept], elements=plan.elements[: len(kept)], form_png=self._form_png, form_at=self._form_at
        )
        if len(plan.answer) > len(kept):
            limit = agent.settings.max_actions_per_step
            facts.dropped.append(
                Dropped(
                    why=f"the model asked for {len(plan.answer)} actions; browser-use runs at most "
                    f"max_actions_per_step={limit} per step",
                    actions=[_dump(a) for a in plan.answer[len(kept) :]],
                    elements=plan.elements[len(kept) :],
                )
            )
        if results and len(results) < len(kept):
            how = "it failed" if results[-1].error else "the page changed or the sequence ended"
            facts.dropped.append(
                Dropped(
                    why=f"browser-use ended the step after action {len(results)} of {len(kept)} because {how}",
                    actions=[_dump(a) for a in kept[len(results) :]],
                    elements=plan.elements[len(results) : len(kept)],
                )
            )
        return facts

    async def _locate(self, action: ActionModel) -> None:
        """Into the element's record (and `located`, for the history): how the locator an export writes for it finds it
        on the page the model answered, as the action is about to run (agent/replay/locate.py)."""
        plan = self._plan
        position = next((i for i, a in enumerate(plan.answer) if a is action), None) if plan is not None else None
        if plan is None or position is None or self._context is None:
            return
        recorded, element = plan.recorded[position], plan.elements[position]
        if recorded is None or element is None:
            return
        pages = self._context.pages  # the tab the model answered, else (a route changed meanwhile) the last one
        page = next((p for p in reversed(pages) if p.url == plan.url), pages[-1] if pages else None)
        element["locator"] = self.located[(plan.step, position)] = await located(page, recorded)

    def with_locators(self, history: dict[str, Any]) -> dict[str, Any]:
        """browser-use's history (dumped) with each recorded element's locator facts, which an export reads."""
        for item in history.get("history") or []:
            step = (item.get("metadata") or {}).get("step_number")
            for position, element in enumerate((item.get("state") or {}).get("interacted_element") or []):
                facts = self.located.get((step, position)) if isinstance(step, int) else None
                if isinstance(element, dict) and facts is not None:
                    element["locator"] = facts
        return history

    def attach(self, context: BrowserContext) -> None:
        """The test's context: its pages are where the actions' elements are found."""
        self._context = context

    async def settle(self, page: Page | None, bound_s: float = SETTLE_S) -> Settled | None:
        """Wait (bounded) until the page has settled by the final page's rule: a step's screenshot and URL show where
        it led once it has rendered, never a blank frame between two documents or an app still drawing (nor a page
        before the answer to the step's WebSocket message); what it waited for, or None without a page."""
        if page is None or page.is_closed():
            return None
        return await self._settler.settle(page, bound_s, restless_s=RESTLESS_S)


def _dump(action: ActionModel) -> dict[str, Any]:
    return action.model_dump(exclude_none=True)


def _interacted(index: int | None, selector_map: dict[int, EnhancedDOMTreeNode]) -> dict[str, Any] | None:
    """The element at `index` as browser-use's history records the element an action touched."""
    from browser_use.dom.views import DOMInteractedElement  # only on the agent's path: a replay imports this module

    node = selector_map.get(index) if index is not None else None
    return None if node is None else DOMInteractedElement.load_from_enhanced_dom_tree(node).to_dict()


def element_facts(index: int | None, selector_map: dict[int, EnhancedDOMTreeNode]) -> dict[str, Any] | None:
    """The element at `index` in the step's DOM: its accessible role and name (as a screen reader says them)."""
    node = selector_map.get(index) if index is not None else None
    if node is None:
        return None
    ax = node.ax_node
    role = ax.role if ax is not None and ax.role and ax.role not in VAGUE_ROLES else None
    labelled = next((node.attributes[k] for k in ("aria-label", "title", "placeholder", "alt") if node.attributes.get(k)), None)
    name = (ax.name if ax is not None else None) or labelled or node.get_all_children_text()
    return {
        "index": index,
        "role": role or node.attributes.get("role") or node.tag_name,
        "name": one_line(name, NAME_LIMIT),
        "tag": node.tag_name,
    }
