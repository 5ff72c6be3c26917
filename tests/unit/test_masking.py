"""Masking before screenshots, over a fake CDP connection: a picture is returned only when the page was masked before
it and nothing changed meanwhile; every other case withholds it and says why."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from cdp_use import CDPClient

from preview_qa.agent.adapter.patches import route_screenshots
from preview_qa.agent.guards import masking
from preview_qa.agent.guards.masking import Mask, ScreenshotWithheld
from preview_qa.secrets.redact import Redactor

SECRET = "Quokka Marmalade &=! 7351"
TREE = {
    "frameTree": {
        "frame": {"id": "top", "loaderId": "doc1"},
        "childFrames": [
            {"frame": {"id": "same-origin", "loaderId": "doc2"}},
            {"frame": {"id": "cross-origin", "loaderId": "doc3"}},
        ],
    }
}


class FakePage:
    """Answers the CDP calls of masking; `masked` is what each evaluation reports, `trees` each frame tree in turn."""

    def __init__(
        self,
        masked: list[int] | None = None,
        trees: list[dict[str, Any]] | None = None,
        evaluate: dict[str, Any] | None = None,
        hang: bool = False,
    ):
        self.masked, self.trees, self.evaluate, self.hang = list(masked or []), list(trees or []), evaluate, hang
        self.calls: list[tuple[str, dict[str, Any] | None]] = []

    async def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self.calls.append((method, params))
        if self.hang:
            await asyncio.sleep(3600)
        if method == "Page.getFrameTree":
            return self.trees.pop(0) if len(self.trees) > 1 else (self.trees[0] if self.trees else TREE)
        if method == "Page.createIsolatedWorld":
            if params and params["frameId"] == "cross-origin":
                raise RuntimeError("No frame for given id found")
            return {"executionContextId": {"top": 11, "same-origin": 12}[params["frameId"] if params else ""]}
        if method == "Runtime.evaluate":
            if self.evaluate is not None:
                return self.evaluate
            return {"result": {"type": "number", "value": self.masked.pop(0) if self.masked else 0}}
        raise AssertionError(method)


def around(page: FakePage, mask: Mask) -> Any:
    async def capture() -> bytes:
        page.calls.append(("capture", None))
        return b"png"

    return asyncio.run(mask.around(page.send, capture))


def test_masks_every_reachable_frame_in_an_isolated_world_then_checks_again() -> None:
    page = FakePage(masked=[2, 0, 0, 0])
    assert around(page, Mask(Redactor({"s": SECRET}))) == b"png"
    methods = [m for m, _ in page.calls]
    assert methods.index("capture") == 6  # tree, 3 worlds (one unreachable), 2 evaluations; then the same again
    evaluations = [p for m, p in page.calls if m == "Runtime.evaluate"]
    assert [p["contextId"] for p in evaluations if p] == [11, 12, 11, 12]  # never the page's own world
    assert all("Quokka+Marmalade+%26%3D%21+7351" in p["expression"] for p in evaluations if p)  # its forms too


def test_a_page_that_changed_during_the_picture_is_tried_again_then_withheld() -> None:
    navigated = {"frameTree": {"frame": {"id": "top", "loaderId": "doc9"}}}
    page = FakePage(trees=[TREE, navigated, TREE, navigated, TREE])
    reasons: list[str] = []
    with pytest.raises(ScreenshotWithheld, match="kept changing"):
        around(page, Mask(Redactor({"s": SECRET}), reasons.append))
    assert reasons == ["the page kept changing"] and [m for m, _ in page.calls].count("capture") == 2


def test_a_secret_that_appeared_while_the_picture_was_taken_withholds_it() -> None:
    page = FakePage(masked=[0, 0, 1, 0, 0, 0, 1, 0])
    with pytest.raises(ScreenshotWithheld):
        around(page, Mask(Redactor({"s": SECRET})))
    assert around(FakePage(masked=[0, 0, 1, 0, 0, 0, 0, 0]), Mask(Redactor({"s": SECRET}))) == b"png"  # the second try was clean


@pytest.mark.parametrize(
    ("page", "why"),
    [
        (FakePage(evaluate={"exceptionDetails": {"text": "TypeError"}}), "masking script failed"),
        (FakePage(trees=[{"frameTree": {"frame": {"id": "cross-origin"}}}]), "No frame for given id"),
    ],
)
def test_a_page_that_cannot_be_masked_is_not_photographed(page: FakePage, why: str) -> None:
    with pytest.raises(ScreenshotWithheld, match=why):
        around(page, Mask(Redactor({"s": SECRET})))
    assert ("capture", None) not in page.calls


def test_masking_that_hangs_is_given_up(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(masking, "MASK_TIMEOUT_S", 0.05)
    page = FakePage(hang=True)
    with pytest.raises(ScreenshotWithheld, match="masking took over"):
        around(page, Mask(Redactor({"s": SECRET})))


def test_without_secrets_the_picture_is_taken_as_is_until_one_is_learnt() -> None:
    page, redactor = FakePage(), Redactor({})
    mask = Mask(redactor)
    assert around(page, mask) == b"png" and page.calls == [("capture", None)]
    redactor.add({"cookie": "session-0123456789"})  # a saved login's cookie, read mid-run
    around(page, mask)
    assert [p for m, p in page.calls if m == "Runtime.evaluate" and p and "session-0123456789" in p["expression"]]


def test_every_screenshot_browser_use_takes_over_a_guarded_connection_is_masked(monkeypatch: pytest.MonkeyPatch) -> None:
    page = FakePage(masked=[1, 0, 0, 0])
    sessions: list[str | None] = []

    async def send_raw(self: CDPClient, method: str, params: Any = None, session_id: str | None = None) -> Any:
        sessions.append(session_id)
        if method in ("Page.captureScreenshot", "Page.navigate"):
            page.calls.append((method, params))
            return {"data": "cG5n"}
        return await page.send(method, params)

    monkeypatch.setattr(CDPClient, "send_raw", send_raw)
    route_screenshots(masking.around)  # as the patches' `apply` does before browser-use's first session
    mask = Mask(Redactor({"s": SECRET}))
    masking.guard("ws://guarded", mask)
    try:
        guarded, other = CDPClient("ws://guarded"), CDPClient("ws://other")
        shot = asyncio.run(guarded.send_raw(method="Page.captureScreenshot", params={}, session_id="tab-1"))
        assert shot == {"data": "cG5n"} and [m for m, _ in page.calls][:1] == ["Page.getFrameTree"]
        assert set(sessions) == {"tab-1"}  # the masking went to the very tab being photographed
        calls = len(page.calls)
        asyncio.run(other.send_raw("Page.captureScreenshot", {}, "tab-2"))  # not ours: untouched
        asyncio.run(guarded.send_raw("Page.navigate", {"url": "x"}, "tab-1"))  # not a screenshot: untouched
        assert [m for m, _ in page.calls[calls:]] == ["Page.captureScreenshot", "Page.navigate"]
    finally:
        masking.release(mask)
    assert "ws://guarded" not in masking._GUARDED
