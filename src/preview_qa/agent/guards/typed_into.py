"""Where typed text goes: the origin of the document that holds the field (its own frame, which may be another host's
iframe inside the preview's page) or, for keys typed to the page, the focused element's. Read over DevTools, from the
browser's frame tree or a world of our own, so that no page's script can dress its document up as another's."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

Send = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]  # one DevTools command on one page's session
Open = Callable[[str], Awaitable[Send]]  # an out-of-process frame's id (its target's) -> a Send on its own session

FOCUS_WORLD = "preview-qa-focus"
MAX_DEPTH = 8  # frames within frames followed to the focused element: deeper, it is unknown (and refused)
# From a frame's document: the origin of the document that holds the focused element, through the frames of its own
# origin; or the frame element holding focus whose document it may not read (another origin's), to look into next.
_FOCUSED = """(() => {
  let doc = document;
  for (;;) {
    const el = doc.activeElement;
    if (!el || !["IFRAME", "FRAME", "OBJECT", "EMBED"].includes(el.tagName)) return doc.defaultView.origin;
    let inner = null;
    try { inner = el.contentDocument; } catch (e) {}
    if (!inner) return el;
    doc = inner;
  }
})()"""


def frame_of(node: Any) -> str | None:
    """The id of the frame whose document holds a browser-use DOM node (EnhancedDOMTreeNode): DevTools gives each
    document's <html> its frame's id, and browser-use links an iframe's document (also another process's) to the
    <iframe> as its parent, so the nearest <html> that names a frame is the node's own document's."""
    while node is not None:
        if str(node.node_name).upper() == "HTML" and node.frame_id:
            return str(node.frame_id)
        node = node.parent_node
    return None


def owned_frame(node: Any) -> str | None:
    """The frame an <iframe> (<frame>, <object>) node holds, or None: text typed into it goes to the frame's focus."""
    return str(node.frame_id) if node.frame_id and str(node.node_name).upper() != "HTML" else None


async def frame_origin(send: Send, frame_id: str) -> str:
    """The origin of the document now in frame `frame_id` of the page (or out-of-process frame) `send` talks to, by the
    browser's frame tree; '' if it holds no such frame, or the document's origin is opaque (a sandbox, a data: URL)."""
    return _origin((await _frames(send)).get(frame_id, {}).get("securityOrigin"))


async def focused_origin(send: Send, open_frame: Open | None = None, frame: str | None = None) -> str:
    """The origin of the document whose element has focus in `frame` (by default the top one) of the page `send` talks
    to, where keys typed there go; read in a world of our own in each frame on the way, where no page's script has
    redefined anything; a frame of another process is looked into through `open_frame`. '' if unknown."""
    frame = frame or (await send("Page.getFrameTree", {}))["frameTree"]["frame"]["id"]
    for _ in range(MAX_DEPTH):
        if frame not in await _frames(send):  # another process's frame: its own session, whose top frame it is
            if open_frame is None or not frame:
                return ""
            send = await open_frame(frame)
        world = await send("Page.createIsolatedWorld", {"frameId": frame, "worldName": FOCUS_WORLD})
        answer = (await send("Runtime.evaluate", {"expression": _FOCUSED, "contextId": world["executionContextId"]}))["result"]
        if answer.get("type") == "string":
            return _origin(answer["value"])
        frame = (await send("DOM.describeNode", {"objectId": answer["objectId"]}))["node"].get("frameId") or ""
    return ""


async def _frames(send: Send) -> dict[str, dict[str, Any]]:
    """The frames of the page `send` talks to (not those of other processes), by id."""
    frames, todo = {}, [(await send("Page.getFrameTree", {}))["frameTree"]]
    while todo:
        branch = todo.pop()
        frames[branch["frame"]["id"]] = branch["frame"]
        todo += branch.get("childFrames") or []
    return frames


def _origin(value: Any) -> str:
    return "" if not value or value == "null" else str(value)  # an opaque origin: unknown
