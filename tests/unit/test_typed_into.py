"""Where typed text goes (agent/guards/typed_into.py), without a browser: the frame of a browser-use DOM node, a frame's origin
by the frame tree, and the focused element's document followed through frames of the same and of other processes, as
DevTools answers (its answers played by a small stand-in)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest

from preview_qa.agent.guards.typed_into import Send, focused_origin, frame_of, frame_origin, owned_frame

PREVIEW, COLLECTOR = "http://127.0.0.1:8000", "http://collector.example:8000"


def node(name: str, frame_id: str | None = None, parent: Any = None) -> Any:
    return SimpleNamespace(node_name=name, frame_id=frame_id, parent_node=parent)


def test_a_field_belongs_to_the_frame_of_its_nearest_document_not_to_the_top_page() -> None:
    top = node("HTML", "top")
    iframe = node("IFRAME", "widget", node("BODY", parent=top))
    field = node("INPUT", parent=node("BODY", parent=node("HTML", "widget", node("#document", parent=iframe))))
    assert frame_of(field) == "widget"
    assert frame_of(node("INPUT", parent=node("BODY", parent=top))) == "top"
    assert frame_of(iframe) == "top" and owned_frame(iframe) == "widget"  # the <iframe> is in the top page; it holds one
    assert owned_frame(field) is None and owned_frame(top) is None
    assert frame_of(node("INPUT")) is None  # no document known: unknown, refused


class Page:
    """A page's DevTools session: its frame tree, and what the focus script answers in each frame (an origin, or the id
    of the frame whose element holds focus and whose document it may not read)."""

    def __init__(self, tree: dict[str, Any], focus: dict[str, str]):
        self.tree, self.focus, self.worlds = tree, focus, {}

    async def send(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "Page.getFrameTree":
            return {"frameTree": self.tree}
        if method == "Page.createIsolatedWorld":
            self.worlds[len(self.worlds) + 1] = params["frameId"]
            return {"executionContextId": len(self.worlds)}
        if method == "Runtime.evaluate":
            answer = self.focus[self.worlds[params["contextId"]]]
            if answer.startswith("frame:"):
                return {"result": {"type": "object", "subtype": "node", "objectId": answer}}
            return {"result": {"type": "string", "value": answer}}
        assert method == "DOM.describeNode"
        return {"node": {"nodeName": "IFRAME", "frameId": params["objectId"].removeprefix("frame:")}}


def frame(id_: str, origin: str, *children: dict[str, Any]) -> dict[str, Any]:
    return {"frame": {"id": id_, "securityOrigin": origin}, "childFrames": list(children)}


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def test_a_frames_origin_comes_from_the_frame_tree() -> None:
    page = Page(frame("top", PREVIEW, frame("ad", COLLECTOR, frame("sandboxed", "null"))), {})
    assert run(frame_origin(page.send, "ad")) == COLLECTOR
    assert run(frame_origin(page.send, "top")) == PREVIEW
    assert run(frame_origin(page.send, "sandboxed")) == ""  # an opaque origin: unknown
    assert run(frame_origin(page.send, "elsewhere")) == ""


@pytest.mark.parametrize(
    ("focus", "opens", "expected"),
    [
        ({"top": PREVIEW}, False, PREVIEW),  # focus in the top page (or its frames of the same origin)
        ({"top": "frame:same-site"}, False, COLLECTOR),  # a frame of another origin in the same process
        ({"top": "frame:oopif"}, True, COLLECTOR),  # another process's frame, looked into on its own session
        ({"top": "frame:oopif"}, False, ""),  # ... and with no way to look into it: unknown, refused
        ({"top": "frame:same-site", "same-site": "frame:same-site"}, False, ""),  # deeper than followed: unknown
        ({"top": "null"}, False, ""),
    ],
)
def test_keys_go_to_the_document_of_the_focused_element_through_every_frame(
    focus: dict[str, str], opens: bool, expected: str
) -> None:
    page = Page(frame("top", PREVIEW, frame("same-site", COLLECTOR)), {"same-site": COLLECTOR, **focus})
    oopif = Page(frame("oopif", COLLECTOR), {"oopif": COLLECTOR})

    async def open_frame(target_id: str) -> Send:
        assert target_id == "oopif"
        return oopif.send

    assert run(focused_origin(page.send, open_frame if opens else None)) == expected


def test_keys_typed_into_an_iframe_element_go_to_its_own_focus() -> None:
    page = Page(frame("top", PREVIEW, frame("widget", COLLECTOR)), {"top": PREVIEW, "widget": COLLECTOR})
    assert run(focused_origin(page.send, None, "widget")) == COLLECTOR
