"""--prove's routes (agent/guards/mutations.py), with Playwright's route and request stood in for: the start page is
never broken, a text removal cuts the text in whatever form a server wrote it, whether the mutation met anything, and
what of a page its content hash leaves out (its per-load tokens)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from preview_qa.agent.guards.mutations import MutatedPreview, without_tokens
from preview_qa.verdict.proof import Mutation, MutationKind, ProofRun

ORIGIN = "http://preview.test"


@dataclass
class _Request:
    url: str
    method: str = "GET"
    resource_type: str = "document"

    def is_navigation_request(self) -> bool:
        return self.resource_type == "document"


@dataclass
class _Response:
    body_bytes: bytes

    async def body(self) -> bytes:
        return self.body_bytes


@dataclass
class _Route:
    served: bytes = b""
    answered: list[Any] = field(default_factory=list)

    async def fulfill(self, status: int = 200, body: bytes | str = b"", **_: Any) -> None:
        self.answered.append((status, body))

    async def continue_(self) -> None:
        self.answered.append("preview")

    async def fetch(self, **_: Any) -> _Response:
        return _Response(self.served)


def _asked(preview: MutatedPreview, request: _Request, served: bytes = b"") -> Any:
    route = _Route(served)
    asyncio.run(preview._on_request(route, request))  # type: ignore[arg-type]
    return route.answered[0]


def test_the_final_document_breaks_but_never_the_start_page_at_the_same_path() -> None:
    preview = MutatedPreview(ORIGIN, ProofRun(Mutation(MutationKind.DOCUMENT_ERROR, "GET", "/shop/orders"), ()))
    assert _asked(preview, _Request(f"{ORIGIN}/shop/orders")) == "preview" and not preview.applied
    status, _ = _asked(preview, _Request(f"{ORIGIN}/shop/orders?item=Anvil"))
    assert status == 500 and preview.applied


def test_a_text_removal_cuts_the_text_as_entities_json_escapes_and_wrapped_lines() -> None:
    text = '1 row where item = "Anvil"'
    preview = MutatedPreview(ORIGIN, ProofRun(Mutation(MutationKind.TEXT_REMOVED, texts=(text,)), ()))
    _asked(preview, _Request(f"{ORIGIN}/"))  # the start page
    page = b'<h3>1 row\n  where item = &#34;Anvil&#34;</h3><script>{"t": "1 row where item = \\"Anvil\\""}</script>'
    _, body = _asked(preview, _Request(f"{ORIGIN}/shop?item=Anvil"), page)
    assert body == b'<h3></h3><script>{"t": ""}</script>' and preview.applied


def test_a_text_removal_that_finds_the_text_nowhere_is_not_applied() -> None:
    preview = MutatedPreview(ORIGIN, ProofRun(Mutation(MutationKind.TEXT_REMOVED, texts=("Saved",)), ()))
    _, body = _asked(preview, _Request(f"{ORIGIN}/"), b"<p>drawn over a WebSocket</p>")
    assert body == b"<p>drawn over a WebSocket</p>" and not preview.applied


def test_a_page_s_per_load_tokens_are_left_out_of_its_content_hash_and_nothing_else() -> None:
    def page(token: str, title: str = "New note") -> bytes:
        return (
            f'<head><meta name="csrf-token" content="{token}"><meta name="description" content="Notes">'
            f'<script nonce="{token}">go()</script></head><h1>{title}</h1><form method=post>'
            f'<input type="hidden" name="csrfmiddlewaretoken" value="{token}"><input type=HIDDEN value={token} name=b>'
            '<input name="title" value="Ada"></form>'
        ).encode()

    assert without_tokens(page("t0k3n-1")) == without_tokens(page("t0k3n-2"))
    assert b"t0k3n" not in without_tokens(page("t0k3n-1"))
    assert without_tokens(page("t0k3n-1")) != without_tokens(page("t0k3n-1", title="Edit note"))  # a real change
    kept = without_tokens(page("x"))
    assert b'content="Notes"' in kept and b'value="Ada"' in kept  # a visible field's value, another meta: kept


def test_the_read_after_a_broken_save_is_noted_only_once_the_save_was_broken() -> None:
    save = Mutation(MutationKind.SERVER_ERROR, "POST", "/notes/new", read_after="GET /notes/ada")
    preview = MutatedPreview(ORIGIN, ProofRun(save, ()))
    _asked(preview, _Request(f"{ORIGIN}/notes/ada"))  # the start page, before the save: not its read
    assert not preview.read_after
    _asked(preview, _Request(f"{ORIGIN}/notes/new", method="POST"))
    assert preview.applied and not preview.read_after
    _asked(preview, _Request(f"{ORIGIN}/notes/ada?x=1"))
    assert preview.read_after
