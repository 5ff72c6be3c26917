"""A cached recording read as steps of actions (pure): what each step did, how to name it, where its page should be, and
which live element a recorded one is (browser-use's matching order, without its guesses)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from preview_qa.agent.evidence.action_names import READS_ONLY, VERDICT
from preview_qa.results import clip

_ID_SEGMENT = re.compile(r"\d+|[0-9a-f]{8,}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.I)
_ROLES = {"a": "link", "button": "button", "select": "combobox", "textarea": "textbox", "img": "image", "option": "option"}
_INPUT_ROLES = {
    "checkbox": "checkbox",
    "radio": "radio",
    "submit": "button",
    "button": "button",
    "reset": "button",
    "file": "file input",
    "range": "slider",
    "search": "searchbox",
}


@dataclass(frozen=True)
class RecordedAction:
    """One action the agent chose; `skip` says why it is not replayed (None: it is)."""

    name: str
    params: dict[str, Any]
    element: dict[str, Any] | None  # browser-use's DOMInteractedElement, as dumped in the history
    skip: str | None = None

    @property
    def needs_element(self) -> bool:
        return self.params.get("index") is not None

    def describe(self) -> str:
        """What the action does, in a reviewer's words: input 'Walk the dog' into textbox 'New todo'."""
        p, target = self.params, describe_element(self.element)
        text = f"'{clip(str(p.get('text', '')), 60)}'"
        known = {
            "input": f"input {text} into {target}",
            "click": f"click {target}",
            "select_dropdown": f"select {text} in {target}",
            "upload_file": f"upload '{p.get('path', '')}' into {target}",
            "navigate": f"navigate to {p.get('url', '')}" + (" in a new tab" if p.get("new_tab") else ""),
            "send_keys": f"press {p.get('keys', '')}",
            "switch": f"switch to tab {p.get('tab_id', '')}",
            "close": f"close tab {p.get('tab_id', '')}",
            "go_back": "go back",
            "scroll": f"scroll {'down' if p.get('down', True) else 'up'}" + (f" in {target}" if self.needs_element else ""),
            "find_text": f"scroll to text '{clip(str(p.get('text', '')), 60)}'",
            "wait": f"wait {p.get('seconds', '')} s",
        }
        if self.name in known:
            return known[self.name]
        shown = {k: v for k, v in p.items() if k != "index"}
        return clip(f"{self.name} {json.dumps(shown, ensure_ascii=False)}" + (f" on {target}" if self.needs_element else ""), 200)


@dataclass(frozen=True)
class RecordedTab:
    tab_id: str  # browser-use's short id: the last four characters of the target id
    url: str


@dataclass(frozen=True)
class RecordedStep:
    """One agent step as recorded; `url` is where its page was when the step began (on the new preview)."""

    number: int
    goal: str
    url: str
    tabs: list[RecordedTab]
    actions: list[RecordedAction]

    @property
    def page_actions(self) -> list[RecordedAction]:
        return [a for a in self.actions if a.skip is None]


def recorded_steps(history: dict[str, Any], old_origin: str, new_origin: str) -> list[RecordedStep]:
    """Every recorded step with every action the agent chose, in order, moved from the recorded preview's origin to
    this run's (a preview URL changes with every pull request)."""
    steps = []
    for position, item in enumerate(history.get("history") or []):
        output = item.get("model_output") or {}
        state = item.get("state") or {}
        results = list(item.get("result") or [])
        elements = list(state.get("interacted_element") or [])
        actions = []
        for i, raw in enumerate(output.get("action") or []):
            name, params = next(iter(raw.items())) if raw else ("nothing", {})
            params = _moved(dict(params or {}), old_origin, new_origin) if name == "navigate" else dict(params or {})
            element = elements[i] if i < len(elements) else None
            actions.append(RecordedAction(name, params, element, _skip_reason(name, i, results)))
        metadata = item.get("metadata") or {}
        tabs = [
            RecordedTab(
                str(t.get("tab_id") or t.get("target_id") or "")[-4:], moved(str(t.get("url") or ""), old_origin, new_origin)
            )
            for t in state.get("tabs") or []
        ]
        steps.append(
            RecordedStep(
                number=int(metadata.get("step_number", position)),
                goal=str(output.get("next_goal") or ""),
                url=moved(str(state.get("url") or ""), old_origin, new_origin),
                tabs=tabs,
                actions=actions,
            )
        )
    return steps


def _skip_reason(name: str, i: int, results: list[dict[str, Any]]) -> str | None:
    if name == VERDICT:
        return "not replayed: the verdict is decided afresh"
    if name in READS_ONLY:
        return "not replayed: it changes nothing on the page"
    if i >= len(results):
        return "not replayed: it never ran when recorded (browser-use stopped the step before it)"
    error = (results[i] or {}).get("error")
    if error:
        return f"not replayed: it failed when recorded ({clip(str(error), 120)})"
    return None


def moved(url: str, old: str, new: str) -> str:
    return new + url[len(old) :] if old != new and url.startswith(old) else url


def _moved(params: dict[str, Any], old: str, new: str) -> dict[str, Any]:
    return {**params, "url": moved(str(params.get("url", "")), old, new)} if "url" in params else params


def same_place(recorded: str, live: str) -> bool:
    """Whether the live page is where the recording was: same origin, path and fragment (an SPA's route); path
    segments that are ids (numbers, hex, UUIDs) may differ, since a replay creates new records. The query is ignored."""
    if not recorded.startswith(("http://", "https://")):
        return True  # the recording did not know (about:blank before the first navigation)
    r, found = urlsplit(recorded), urlsplit(live)
    return (
        (r.scheme, r.netloc) == (found.scheme, found.netloc)
        and _shape(r.path) == _shape(found.path)
        and _shape(r.fragment) == _shape(found.fragment)
    )


def _shape(path: str) -> list[str]:
    return ["*" if _ID_SEGMENT.fullmatch(s) else s for s in path.strip("/").split("/")]


def describe_element(element: dict[str, Any] | None) -> str:
    """role 'name', e.g. textbox 'New todo', from what browser-use recorded about the element."""
    if not element:
        return "an element that was not recorded"
    attributes = element.get("attributes") or {}
    tag = str(element.get("node_name") or "element").lower()
    role = attributes.get("role") or (
        _INPUT_ROLES.get(attributes.get("type", "text"), "textbox") if tag == "input" else _ROLES.get(tag, tag)
    )
    name = next(
        (
            str(v)
            for v in (
                element.get("ax_name"),
                attributes.get("aria-label"),
                attributes.get("placeholder"),
                attributes.get("title"),
                attributes.get("name"),
                attributes.get("id"),
            )
            if v
        ),
        "",
    )
    return f"{role} '{clip(' '.join(name.split()), 60)}'" if name else role


@dataclass(frozen=True)
class LiveElement:
    """An element of the live page as the replay reads it: its tag, its XPath written browser-use's way, its accessible
    name (Chromium's, as in browser-use's accessibility tree), its identifying attributes and whether it is rendered."""

    tag: str
    xpath: str
    name: str | None
    attributes: dict[str, str]
    visible: bool


def find_element(recorded: dict[str, Any], live: list[LiveElement]) -> tuple[int | None, str]:
    """The position in `live` of the recorded element and how it was found, or None and why not.

    browser-use's order without its guesses and without its hashes (they need its own capture of the page): the
    element at the recorded XPath with the same tag and accessible name, then a rendered element of that tag with the
    same accessible name, then id, name, aria-label. A level that finds several elements settles on the one at the
    recorded XPath or gives up as ambiguous (browser-use takes the first)."""
    node = str(recorded.get("node_name") or "").lower()
    ax_name = recorded.get("ax_name") or None
    attributes = recorded.get("attributes") or {}
    same_tag = [(i, e) for i, e in enumerate(live) if e.tag == node]
    shown = [(i, e) for i, e in same_tag if e.visible]
    levels: list[tuple[str, list[tuple[int, LiveElement]]]] = [
        ("XPath", [(i, e) for i, e in same_tag if e.xpath == recorded.get("x_path") and e.name == ax_name]),
        ("accessible name", [(i, e) for i, e in shown if ax_name and e.name == ax_name]),
    ]
    for key in ("id", "name", "aria-label"):
        if attributes.get(key):
            levels.append((key, [(i, e) for i, e in shown if e.attributes.get(key) == attributes[key]]))
    for how, found in levels:
        if len(found) > 1:
            found = [(i, e) for i, e in found if e.xpath == recorded.get("x_path")]
            if len(found) != 1:
                return None, f"ambiguous: several elements on the page match it by {how}"
        if found:
            return found[0][0], how
    return None, "element not found"
