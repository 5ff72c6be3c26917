"""What a test's browser context may send, for the agent, a replay and the checks alike: navigations only to the
test's allowed hosts (stopped before their request leaves, redirects included), a secret's value only to them (the
firewall), and no agent action that would carry a secret elsewhere. Every refusal is an event; a secret's is also the
fact that fails the test (see verdict/decide.py)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit

from preview_qa.events import Observed
from preview_qa.manifest.models import SECRET_TAG
from preview_qa.manifest.step_rules import allows_host
from preview_qa.secrets.redact import Redactor, describe
from preview_qa.verdict.agent_run import BlockedNavigation, SecretAttempt
from preview_qa.verdict.decide import secret_line

if TYPE_CHECKING:
    from playwright.async_api import BrowserContext, CDPSession, Page, Request, Route, WebSocketRoute

PAGE_ACTIONS = frozenset({"input", "send_keys"})  # a secret they carry goes into a document: its field's, the focused one's
SENDS_NOTHING = frozenset({"done"})  # the report: redacted like every output, sent nowhere
_REDIRECT = range(300, 400)
_HELD = ("Document", "Fetch", "XHR")  # the responses whose redirect is judged before its next hop is sent


def host_of(url: str) -> str:
    return (urlsplit(url).hostname or "").lower()


class RequestPolicy:
    """One test's rules, on its own browser context (tests with other allowed hosts share the browser). `credentials`
    (a protection bypass, basic auth: header name -> value) are added to the requests to `origin` alone."""

    def __init__(
        self,
        test: str,
        hosts: list[str],
        redactor: Redactor,
        emit: Callable[[Observed], None],
        origin: str = "",
        credentials: dict[str, str] | None = None,
    ):
        self.test, self.hosts, self.redactor, self._emit = test, [h.lower() for h in hosts if h], redactor, emit
        self.attempts: list[SecretAttempt] = []
        self.navigations_blocked: list[BlockedNavigation] = []  # a page's own navigations stopped, in order
        self._guards: set[asyncio.Task[None]] = set()
        self._origin, self._credentials = origin.lower(), credentials or {}
        self.last_action: Callable[[], str | None] = lambda: None  # the action under way, in words (None: none yet)

    @property
    def guarding(self) -> list[asyncio.Task[None]]:
        """The redirect guards still being set up or answering (the bench waits for them)."""
        return list(self._guards)

    def allows(self, host: str) -> bool:
        """An allowed host, or a subdomain of an allowed `*.example.com`."""
        return allows_host(self.hosts, host)

    @property
    def elsewhere(self) -> re.Pattern[str]:
        """Every http(s) or ws(s) URL whose host is not allowed: matched in Playwright's driver, so a request or a
        WebSocket to an allowed host never waits for Python."""
        names = "|".join(
            re.escape(h[2:]) + "|(?:[^/?#:@]+\\.)+" + re.escape(h[2:]) if h.startswith("*.") else re.escape(h) for h in self.hosts
        )
        return re.compile(rf"^(?:http|ws)s?://(?:[^/?#@]*@)?(?!(?:{names})(?::\d+)?(?:[/?#]|$))", re.IGNORECASE)

    async def install(self, context: BrowserContext) -> None:
        """The rules on every page of the context: the pages it has now before the test starts, later ones (tabs,
        popups) as they open."""
        await context.route(self.elsewhere, self._on_request)
        await context.route_web_socket(self.elsewhere, self._on_web_socket)
        context.on("page", self._guard_page)
        for page in context.pages:
            await self._guard_redirects(page)

    @property
    def patterns(self) -> list[dict[str, str]]:
        """What each page's own DevTools session holds: every document's, fetch's and XHR's response (its redirect, if
        any, is checked) and, with credentials, every request to the preview's origin (each hop of a redirect is a
        request of its own here, so nothing added reaches another origin: Playwright's route re-applies its headers to
        every redirect hop)."""
        held = [{"resourceType": kind, "requestStage": "Response"} for kind in _HELD]
        if self._credentials:
            held.append({"urlPattern": f"{self._origin}/*", "requestStage": "Request"})
        return held

    def secret_in(self, action: dict[str, Any]) -> str | None:
        """The name of a secret the action (name -> params) carries, as a placeholder or as its value, or None."""
        name, params = next(iter(action.items()), ("", None))
        if name in SENDS_NOTHING or params is None:
            return None
        text = json.dumps(params, ensure_ascii=False)
        return next(iter(SECRET_TAG.findall(text)), None) or self.redactor.find(text)

    def check_action(self, action: dict[str, Any], typed_into: str) -> SecretAttempt | None:
        """The secret an agent action would carry to a place other than an allowed host (another host's URL, a new tab
        to it, a field of another host's document, a file, a search), or None. Seen before browser-use puts the
        secret's value in. `typed_into`: for a typing action, the URL or origin of the document its text goes into
        (its field's frame, not the top page's: that may be another host's iframe), '' when unknown."""
        secret = self.secret_in(action)
        if secret is None:
            return None
        name, params = next(iter(action.items()))
        if name == "navigate":
            url = str(params.get("url", ""))
            where = host_of(url if "://" in url else f"http://{url}")  # browser-use adds a missing scheme
        elif name in PAGE_ACTIONS:
            where = host_of(typed_into)
        else:
            where = f"the {name} action"
        if where and self.allows(where):
            return None
        return self._secret(secret, where or "an unknown place", "agent action")

    async def _on_request(self, route: Route, request: Request) -> None:
        host = host_of(request.url)
        if self.allows(host):  # the driver's pattern is only a prefilter
            await route.continue_()
            return
        secret = self.redactor.find(_sent(request))
        if secret is not None:
            self._secret(secret, host, "request")
            await route.abort("blockedbyclient")
        elif _main_frame_navigation(request):
            self._blocked(host, "request")
            await route.abort("blockedbyclient")
        else:  # a CDN, a font, a payment iframe of the preview's own pages
            await route.continue_()

    async def _on_web_socket(self, socket: WebSocketRoute) -> None:
        """A WebSocket to a host outside the allowed hosts (its pattern, matched in Playwright's driver, says so; others
        are the page's own, untouched): refused when its URL holds a secret, else connected through Python, each message
        the page sends checked like a request's body and dropped (the socket closed) when it holds a secret. The
        server's messages reach the page untouched."""
        host = host_of(socket.url)
        secret = self.redactor.find(socket.url)
        if secret is not None:
            self._secret(secret, host, "websocket")
            await socket.close(code=1008, reason="blocked by preview-qa")
            return
        server = socket.connect_to_server()

        def send(message: str | bytes) -> None:
            found = self.redactor.find(message if isinstance(message, str) else message.decode("utf-8", "replace"))
            if found is None:
                server.send(message)
                return
            self._secret(found, host, "websocket")
            self._track(socket.close(code=1008, reason="blocked by preview-qa"))

        socket.on_message(send)

    def _guard_page(self, page: Page) -> None:
        self._track(self._guard_redirects(page))

    def _track(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._guards.add(task)
        task.add_done_callback(self._guards.discard)

    async def _guard_redirects(self, page: Page) -> None:
        """A route never sees a redirect's next hop: each document's, fetch's and XHR's response is held until its
        redirect, if it has one, is known to lead to an allowed host or to carry no secret (and, for the main frame's
        document, to stay on the allowed hosts); see `patterns`. A page opened
        later (a popup) may send its first request before its session is ready: that one goes without credentials."""
        with contextlib.suppress(Exception):  # a page closed before its guard was ready
            cdp = await page.context.new_cdp_session(page)
            main = (await cdp.send("Target.getTargetInfo"))["targetInfo"]["targetId"]
            cdp.on("Fetch.requestPaused", lambda event: self._guard_task(cdp, main, event))
            await cdp.send("Fetch.enable", {"patterns": self.patterns})

    def _guard_task(self, cdp: CDPSession, main: str, event: dict[str, Any]) -> None:
        answered = "responseStatusCode" in event or "responseErrorReason" in event
        self._track(self._on_response(cdp, main, event) if answered else self._add_credentials(cdp, event))

    async def _add_credentials(self, cdp: CDPSession, event: dict[str, Any]) -> None:
        """A request to the preview's origin (its pattern says so): with the credentials, for this hop alone."""
        sent = {name: value for name, value in event["request"]["headers"].items() if name.lower() != "cookie"}
        headers = [{"name": name, "value": value} for name, value in {**sent, **self._credentials}.items()]
        with contextlib.suppress(Exception):  # the page went away meanwhile
            await cdp.send("Fetch.continueRequest", {"requestId": event["requestId"], "headers": headers})

    def refuses_redirect(self, event: dict[str, Any], main: str) -> bool:
        """A held response (a `Fetch.requestPaused` event of the page whose main frame is `main`) whose next hop must
        not be sent, recorded: a redirect to a host outside the allowed hosts with a secret in its URL (a document's, a
        fetch's, an XHR's), or the main frame's own navigation there."""
        headers = {h["name"].lower(): h["value"] for h in event.get("responseHeaders") or []}
        target = urljoin(event["request"]["url"], headers.get("location", ""))
        host = host_of(target)
        if event.get("responseStatusCode") not in _REDIRECT or "location" not in headers or self.allows(host):
            return False
        secret = self.redactor.find(target)
        if secret is not None:
            self._secret(secret, host, "redirect")
            return True
        if event.get("resourceType") == "Document" and event.get("frameId") == main:
            self._blocked(host, "redirect")
            return True
        return False  # a fetch's, a frame's or a subresource's: under the firewall alone

    async def _on_response(self, cdp: CDPSession, main: str, event: dict[str, Any]) -> None:
        refuse = self.refuses_redirect(event, main)
        with contextlib.suppress(Exception):  # the page went away meanwhile
            if refuse:
                await cdp.send("Fetch.failRequest", {"requestId": event["requestId"], "errorReason": "BlockedByClient"})
            else:
                await cdp.send("Fetch.continueRequest", {"requestId": event["requestId"]})

    def _secret(self, name: str, host: str, by: str) -> SecretAttempt:
        attempt = SecretAttempt(name=name, host=host)
        self.attempts.append(attempt)
        self._emit(
            Observed(name=self.test, kind="secret_blocked", error=True, detail={"secret": describe(name), "host": host, "by": by})
        )
        return attempt

    def _blocked(self, host: str, by: str) -> None:
        self.navigations_blocked.append(BlockedNavigation(host, self.last_action()))
        self._emit(Observed(name=self.test, kind="navigation_blocked", error=True, detail={"host": host, "by": by}))


class ActionGuard:
    """Why an action (name -> params) of the agent or the replay is refused (it would carry a secret off), or None.
    `typed_into` finds the document a typing action's text would go into (its URL or origin, '' when unknown): it is
    asked only for a typing action that carries a secret, as that lookup talks to the browser."""

    def __init__(self, policy: RequestPolicy):
        self._policy = policy

    def types_secret(self, action: dict[str, Any]) -> bool:
        return next(iter(action), "") in PAGE_ACTIONS and self._policy.secret_in(action) is not None

    async def refusal(self, action: dict[str, Any], typed_into: Callable[[], Awaitable[str]]) -> str | None:
        attempt = self._policy.check_action(action, await typed_into() if self.types_secret(action) else "")
        return None if attempt is None else f"blocked: {secret_line(attempt)}; secrets go to the site under test only"


def _main_frame_navigation(request: Request) -> bool:
    with contextlib.suppress(Exception):  # a service worker's request has no frame
        return request.is_navigation_request() and request.frame.parent_frame is None
    return False


def _sent(request: Request) -> str:
    """All a request would carry off: its URL, its headers' values and its body (as UTF-8)."""
    body = b""
    with contextlib.suppress(Exception):
        body = request.post_data_buffer or b""
    return "\n".join([request.url, *request.headers.values(), body.decode("utf-8", "replace")])
