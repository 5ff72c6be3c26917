"""--prove in the browser: the test's own run keeps the requests it made to the preview (in memory), a hash of the
documents (less their per-load tokens) and scripts its pages loaded, and its page checks on the start page before its
first action; a proof's replay gets one mutation as Playwright routes, and none of its non-GET requests reaches the
preview: each is answered by the mutation or with the own run's answer."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import re
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING
from urllib.parse import urljoin, urlsplit

from preview_qa.engine.preview import origin_of
from preview_qa.manifest.models import Expectations
from preview_qa.results import ExpectationOutcome
from preview_qa.verdict.agent_run import AgentRun, SeenRequest
from preview_qa.verdict.proof import MutationKind, ProofRun, path_of

if TYPE_CHECKING:
    from playwright.async_api import BrowserContext, Page, Request, Response, Route

HASHED = ("document", "script")  # what defines the preview's content for a proof's cache
CUT = ("document", "fetch", "xhr")  # where a text removal cuts the expected texts
BROKEN = b"<!doctype html><title>500 Internal Server Error</title><h1>500 Internal Server Error</h1>"
NOT_SENT = ("content-length", "content-encoding", "transfer-encoding")  # of a kept answer: its body is decoded
# How a character of an expected text may stand in a body: as itself, as an HTML entity (named, decimal or hex, as
# servers write them: Datasette's &#34;) or JSON-escaped; a text removal cuts every form.
_FORMS = {
    '"': ('"', "&quot;", "&#34;", "&#x22;", '\\"', "\\u0022"),
    "'": ("'", "&#39;", "&#x27;", "&apos;", "\\u0027"),
    "&": ("&", "&amp;", "&#38;", "&#x26;", "\\u0026"),
    "<": ("<", "&lt;", "&#60;", "&#x3c;", "&#x3C;", "\\u003c"),
    ">": (">", "&gt;", "&#62;", "&#x3e;", "&#x3E;", "\\u003e"),
}
_SPACE = r"(?:\s|&nbsp;|&#160;|\\n)+"  # a space of the visible text: any run of white space in the source
# What a server writes afresh into each load of an unchanged page (a form's CSRF token, a CSP nonce): left out of the
# content hash, so that a second run on the same preview takes its proofs from the cache.
_VALUE = rb"""\s*=\s*(?:"[^"]*"|'[^']*'|[^\s>]+)"""
_HIDDEN_INPUT = re.compile(rb"""<input\b[^>]*\btype\s*=\s*["']?hidden\b[^>]*>""", re.IGNORECASE)
_CSRF_META = re.compile(rb"""<meta\b[^>]*\bname\s*=\s*["']?[^"'\s>]*csrf[^>]*>""", re.IGNORECASE)
_NONCE = re.compile(rb"\bnonce" + _VALUE, re.IGNORECASE)
_VALUE_ATTRIBUTE = re.compile(rb"\b(value|content)" + _VALUE, re.IGNORECASE)


class RequestLog:
    """The test's own run's requests to the preview, in order, each with the action it followed; a non-GET's answer
    (status, headers, body) and the hash of each document's and script's body are read as they arrive."""

    def __init__(self, origin: str, last_action: Callable[[], str | None]):
        self.origin, self.last_action = origin, last_action
        self.seen: list[SeenRequest] = []
        self._reading: set[asyncio.Task[None]] = set()
        self._hashes: dict[str, str] = {}  # path and query -> sha256 of its body

    def attach(self, context: BrowserContext) -> None:
        context.on("page", self._watch)
        for page in context.pages:
            self._watch(page)

    def _watch(self, page: Page) -> None:
        page.on("response", self._on_response)

    def _on_response(self, response: Response) -> None:
        request = response.request
        if origin_of(request.url) != self.origin:
            return
        index = len(self.seen)
        self.seen.append(SeenRequest(request.method, request.url, request.resource_type, self.last_action(), response.status))
        if request.method != "GET" or request.resource_type in HASHED:
            task = asyncio.get_running_loop().create_task(self._read(response, index))
            self._reading.add(task)
            task.add_done_callback(self._reading.discard)

    async def _read(self, response: Response, index: int) -> None:
        with contextlib.suppress(Exception):  # the page went away meanwhile
            if response.request.method == "GET":
                where = urlsplit(response.url)  # not its origin: a new preview URL with the same pages is the same content
                body = await response.body()
                body = without_tokens(body) if response.request.resource_type == "document" else body
                self._hashes[f"{where.path}?{where.query}"] = hashlib.sha256(body).hexdigest()
                return
            headers = {k: v for k, v in (await response.all_headers()).items() if k.lower() not in NOT_SENT}
            body = b""
            with contextlib.suppress(Exception):  # a redirect has none
                body = await response.body()
            kept = self.seen[index]
            self.seen[index] = SeenRequest(kept.method, kept.url, kept.resource_type, kept.after, kept.status, headers, body)

    async def settled(self) -> str:
        """Once every answer is read: the hash of the preview's content as the run's pages loaded it."""
        if self._reading:
            await asyncio.wait(list(self._reading), timeout=5)
        return hashlib.sha256("\n".join(f"{u} {h}" for u, h in sorted(self._hashes.items())).encode()).hexdigest()


class MutatedPreview:
    """One proof replay's routes on the preview's origin: its mutation, and the own run's answers to its non-GETs."""

    def __init__(self, origin: str, proof: ProofRun):
        self.origin, self.proof = origin, proof
        self._sent: Counter[tuple[str, str]] = Counter()  # non-GETs per method and URL, to answer each in turn
        self._started = False  # the start page has been asked for: it is never broken (the test never began)
        self._texts = [_pattern(t) for t in proof.mutation.texts]
        self.applied = False  # whether the mutation met a request of the replay: one that never did proves nothing
        self.read_after = False  # whether the replay, once mutated, made the read that follows the write in the own run

    async def install(self, context: BrowserContext) -> None:
        await context.route(lambda url: origin_of(url) == self.origin, self._on_request)

    async def _on_request(self, route: Route, request: Request) -> None:
        mutation, method, kind = self.proof.mutation, request.method, request.resource_type
        start = kind == "document" and request.is_navigation_request() and not self._started
        self._started |= start
        hit = mutation.hits(method, request.url) and not start
        self.read_after |= self.applied and method == "GET" and mutation.read_after == f"GET {path_of(request.url)}"
        if hit and mutation.kind is MutationKind.SERVER_ERROR and kind != "document":
            self.applied = True
            await route.fulfill(status=500, body=b'{"error": "mutated by preview-qa --prove"}', content_type="application/json")
        elif hit and mutation.kind is MutationKind.SERVER_ERROR:
            self.applied = True
            await route.fulfill(status=500, body=BROKEN, content_type="text/html")
        elif hit and mutation.kind is MutationKind.NOT_SAVED:
            self.applied = True
            await route.fulfill(status=200, body=b"")
        elif hit and mutation.kind is MutationKind.DOCUMENT_ERROR and kind == "document":
            self.applied = True
            await route.fulfill(status=500, body=BROKEN, content_type="text/html")
        elif method != "GET":
            await self._answer_as_seen(route, request)
        elif mutation.kind is MutationKind.TEXT_REMOVED and kind in CUT:
            await self._cut_texts(route)
        else:
            await route.continue_()

    async def _cut_texts(self, route: Route) -> None:
        """The preview's answer to a GET, the expected texts cut from it; a request that fails fails as it would."""
        try:
            response = await route.fetch(max_redirects=0)
        except Exception:
            await route.abort()
            return
        await route.fulfill(response=response, body=self._cut(await response.body()))

    async def _answer_as_seen(self, route: Route, request: Request) -> None:
        """A non-GET never reaches the preview: the own run's answer to it, else it fails as if blocked."""
        key = (request.method, request.url)
        seen = self.proof.answer(*key, self._sent[key])
        self._sent[key] += 1
        if seen is None:
            await route.abort("blockedbyclient")
            return
        location = seen.headers.get("location")
        if 300 <= seen.status < 400 and location and request.resource_type == "document":
            # A route never sees a redirect's next hop: the page goes there on its own, so that the mutation sees it.
            target = json.dumps(urljoin(request.url, location)).replace("<", "\\u003c")
            kept = {k: v for k, v in seen.headers.items() if k.lower() == "set-cookie"}
            page = f"<!doctype html><script>location.replace({target})</script>"
            await route.fulfill(status=200, headers=kept, body=page, content_type="text/html")
            return
        await route.fulfill(status=seen.status, headers=seen.headers, body=self._cut(seen.body))

    def _cut(self, body: bytes) -> bytes:
        """The body, with the expected texts removed under a text removal (in every form a page or a JSON answer
        writes them: see _FORMS)."""
        if self.proof.mutation.kind is not MutationKind.TEXT_REMOVED:
            return body
        for pattern in self._texts:
            body, cut = pattern.subn(b"", body)
            self.applied |= bool(cut)
        return body


def without_tokens(document: bytes) -> bytes:
    """A page's HTML less what a server writes afresh into every load: the values of hidden inputs, the content of
    <meta> tags whose name says csrf, and nonce attributes. Anything else that changes still changes the hash."""
    document = _CSRF_META.sub(_blank_values, _HIDDEN_INPUT.sub(_blank_values, document))
    return _NONCE.sub(b'nonce=""', document)


def _blank_values(tag: re.Match[bytes]) -> bytes:
    return _VALUE_ATTRIBUTE.sub(rb'\1=""', tag.group(0))


def _pattern(text: str) -> re.Pattern[bytes]:
    """`text` as it may stand in a body: each character that HTML or JSON escapes in any of its forms, each space as
    any run of white space (the visible text a check reads has it collapsed)."""
    parts = (
        _SPACE if c.isspace() else "(?:" + "|".join(re.escape(f) for f in _FORMS[c]) + ")" if c in _FORMS else re.escape(c)
        for c in text
    )
    return re.compile("".join(parts).encode())


class Proving:
    """What --prove adds to a test's browser: its own run's request log and its checks on the start page before its
    first action, or a proof replay's mutated preview."""

    def __init__(
        self,
        origin: str,
        log_requests: bool,
        proof: ProofRun | None,
        last_action: Callable[[], str | None],
        expect: Expectations,
        look: Callable[[Page], Awaitable[list[ExpectationOutcome] | None]],
    ):
        self.log = RequestLog(origin, last_action) if log_requests else None
        self.mutated = MutatedPreview(origin, proof) if proof is not None else None
        self.last_action = last_action
        # The own run's page checks on its start page, before its first action (data checks need a report): `look`
        self._look = look if log_requests and (expect.has_page_checks or expect.accessibility) else None
        self._start_checks: list[ExpectationOutcome] | None = None  # None: not known, so no catch is called weak for it

    @property
    def judges_drift(self) -> bool:
        """A proof's replay that cannot follow its recording is judged on the page the app showed instead."""
        return self.mutated is not None

    async def before_first_action(self, page: Page) -> None:
        """The own run is on its start page, about to act: which of its checks hold here, each looked at once (a proof
        asks whether the checks that failed under a mutation already held before the test did anything)."""
        if self._look is not None and self._start_checks is None:
            self._start_checks = await self._look(page)

    async def install(self, context: BrowserContext) -> None:
        if self.mutated is not None:  # a proof's replay: the preview mutated, and never written to
            await self.mutated.install(context)
        if self.log is not None:
            self.log.attach(context)

    async def tell(self, result: AgentRun) -> None:
        """Into the run's facts: its requests and the preview's content hash (before the context closes: the answers
        are read from it), and whether a proof's mutation met a request."""
        if self.log is not None:
            result.content_hash, result.requests = await self.log.settled(), self.log.seen
        result.held_before = self._start_checks if self.last_action() is not None else None  # an action followed them
        if self.mutated is not None:
            result.mutation_applied, result.read_after_made = self.mutated.applied, self.mutated.read_after
