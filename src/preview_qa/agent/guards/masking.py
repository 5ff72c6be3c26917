"""No secret in pixels: before every screenshot, fields and text that hold a secret are drawn as dots.

The masking script runs in an isolated world (`Page.createIsolatedWorld` + `Runtime.evaluate`): the secret values
live only there, where the page's own scripts cannot reach them; the page sees no more than a style on an element
that already holds the secret. Every screenshot of a guarded browser goes through `Mask.around`, which masks, takes
the picture, then looks again: if a document changed or something new needed masking meanwhile, the picture is
withheld (never returned) rather than risk a secret in it.

Covered: the values of inputs, textareas and selects, and text (also split over several elements), in the page and
its same-process frames and open shadow roots, in the raw and encoded forms of `redact.forms`. Not covered: a secret
a page draws itself (canvas, images, CSS `content`), cross-origin frames, closed shadow roots, and a page that keeps
undoing the mask — all need a page that means to show the secret it was given.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

from preview_qa.secrets.redact import Redactor, forms

MASK_TIMEOUT_S = 5.0
ATTEMPTS = 2  # a page that is still changing gets one more try before its screenshot is withheld
WORLD = "preview-qa-mask"

Send = Callable[[str, dict[str, Any] | None], Awaitable[dict[str, Any]]]
# (send over the client's own session, take the picture) -> the picture; how a guarded connection takes screenshots
Around = Callable[[Send, Callable[[], Awaitable[Any]]], Awaitable[Any]]

# Returns how many elements it newly masked. Compares lower-cased with whitespace folded, as the page renders it.
_SCRIPT = """(values) => {
  const fold = (s) => String(s).replace(/\\s+/g, " ").toLowerCase();
  const wanted = values.map(fold);
  const has = (s) => { if (!s) return false; const t = fold(s); return wanted.some((v) => t.includes(v)); };
  let masked = 0;
  const mask = (el) => {
    if (!el.style || el.style.getPropertyPriority("-webkit-text-security") === "important") return;
    el.style.setProperty("-webkit-text-security", "disc", "important");
    masked += 1;
  };
  const smallest = (el) => {  // the innermost elements whose text holds a secret
    let inChild = false;
    for (const child of el.children) if (has(child.textContent)) { smallest(child); inChild = true; }
    if (!inChild) mask(el);
  };
  const roots = [document];
  for (let i = 0; i < roots.length; i++) {
    for (const el of roots[i].querySelectorAll("*")) {
      if (el.shadowRoot) roots.push(el.shadowRoot);
      const field = el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement;
      if ((field && (has(el.value) || has(el.placeholder)))
          || (el instanceof HTMLSelectElement && Array.from(el.selectedOptions).some((o) => has(o.text)))) mask(el);
    }
    const tops = roots[i] === document ? [document.documentElement] : Array.from(roots[i].children);
    for (const top of tops) if (top && has(top.textContent)) smallest(top);
  }
  return masked;
}"""


class ScreenshotWithheld(RuntimeError):
    """A screenshot was not taken (or not returned) because its secrets could not be masked for certain."""


class Mask:
    """Masks the redactor's secrets (every form of each, also those it learns mid-run) on a page before a screenshot;
    `on_withheld` hears of a withheld one."""

    def __init__(self, redactor: Redactor, on_withheld: Callable[[str], None] | None = None):
        self.redactor, self.on_withheld = redactor, on_withheld
        self._known: list[str] | None = None
        self.values: list[str] = []
        self._expression = ""

    def _refresh(self) -> None:
        if self._known != self.redactor.values:
            self._known = list(self.redactor.values)
            self.values = list(dict.fromkeys(form for value in self._known for form in forms(value)))
            self._expression = f"({_SCRIPT})({json.dumps(self.values)})"

    async def around(self, send: Send, capture: Callable[[], Awaitable[Any]]) -> Any:
        """`capture()` between masking and a check that nothing changed; ScreenshotWithheld if it did (twice)."""
        self._refresh()
        if not self.values:
            return await capture()
        why = "the page kept changing"
        try:
            for _ in range(ATTEMPTS):
                async with asyncio.timeout(MASK_TIMEOUT_S):
                    documents, _masked = await self._apply(send)
                shot = await capture()
                async with asyncio.timeout(MASK_TIMEOUT_S):
                    after, masked = await self._apply(send)
                if after == documents and not masked:
                    return shot
        except ScreenshotWithheld as e:
            why = str(e)
        except TimeoutError:
            why = f"masking took over {MASK_TIMEOUT_S:g} s"
        except Exception as e:
            why = f"masking failed: {type(e).__name__}: {e}"
        if self.on_withheld is not None:
            self.on_withheld(why)
        raise ScreenshotWithheld(f"screenshot withheld, secrets could not be masked: {why}")

    async def _apply(self, send: Send) -> tuple[list[tuple[str, str]], int]:
        """Mask every frame of the page: (each frame's id and document, elements newly masked)."""
        tree = (await send("Page.getFrameTree", None))["frameTree"]
        frames, pending = [], [tree]
        while pending:
            node = pending.pop()
            frames.append((node["frame"]["id"], node["frame"].get("loaderId", "")))
            pending += node.get("childFrames") or []
        masked = 0
        for index, (frame, _) in enumerate(frames):
            try:
                world = await send("Page.createIsolatedWorld", {"frameId": frame, "worldName": WORLD})
            except Exception:
                if index == 0:
                    raise
                continue  # a cross-origin frame lives in another process: not reachable from this page's session
            result = await send(
                "Runtime.evaluate",
                {"expression": self._expression, "returnByValue": True, "contextId": world["executionContextId"]},
            )
            if "exceptionDetails" in result:
                raise ScreenshotWithheld(f"the masking script failed in frame {index}")
            masked += int(result["result"].get("value") or 0)
        return sorted(frames), masked


_GUARDED: dict[str, Mask] = {}  # the browser context browser-use's connection is kept to -> the mask for that test


def guard(context_id: str, mask: Mask) -> None:
    """Mask before every screenshot browser-use takes in the browser context `context_id` (for the LLM's vision, and
    ours) until `release`. browser-use's screenshots reach `around` through the router agent/adapter/patches.py
    installs (item 4) before browser-use's first session."""
    _GUARDED[context_id] = mask


def release(mask: Mask) -> None:
    """Forget the contexts `mask` guarded (they are closed)."""
    for key in [key for key, guarded in _GUARDED.items() if guarded is mask]:
        del _GUARDED[key]


def around(key: str) -> Around | None:
    """The wrapper for a screenshot over the connection kept to the browser context `key`, if a mask guards it."""
    mask = _GUARDED.get(key)
    return mask.around if mask is not None else None


async def screenshot(page: Any, mask: Mask, /, **options: Any) -> bytes:
    """A Playwright page's screenshot, masked like browser-use's (over a CDP session of its own). One pixel a CSS pixel,
    as browser-use's are: a device's screenshot is its viewport's size, not three times it."""
    options = {"scale": "css", **options}
    if not mask.redactor.values:
        return await page.screenshot(**options)
    cdp = await page.context.new_cdp_session(page)
    try:
        return await mask.around(cdp.send, lambda: page.screenshot(**options))
    finally:
        await cdp.detach()
