"""Turns what goes wrong during a test into error events: browser errors (over Playwright), LLM faults, blocked
navigation; and keeps the facts the verdict weighs: the server errors that followed an action, a start page that
asked for credentials, the problems seen on the app's pages (exceptions, console errors, failed requests)."""

from __future__ import annotations

import asyncio
import dataclasses
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from preview_qa.agent.evidence.action_names import READS_ONLY, VERDICT
from preview_qa.agent.evidence.visits import Visits
from preview_qa.agent.page import every_page
from preview_qa.engine.preview import origin_of
from preview_qa.events import ConsoleError, Observed, ObservedKind, PageError
from preview_qa.results import EvidenceSummary, PageProblem, ProblemKind, clip
from preview_qa.verdict.agent_run import AgentRun, BlockedNavigation, LLMFault, ServerError

if TYPE_CHECKING:
    from browser_use.browser.events import BrowserErrorEvent
    from playwright.async_api import Browser, BrowserContext, ConsoleMessage, Page, Request, Response

DETAIL_LIMIT = 500
BLOCKED = ("NavigationBlocked", "TabCreationBlocked")  # browser-use's security watchdog enforcing allowed_domains
_ICON_FILE = re.compile(r"[^/]*icon[^/]*\.(ico|png|svg|gif|webp|jpe?g)|[^/]+\.ico", re.IGNORECASE)
UNMOVED = READS_ONLY | {VERDICT, "wait"}  # actions after which the app has nothing new to answer
LABEL_LIMIT = 60
PROBLEMS_BOUND = 200  # of each kind, kept for the checks and the result; past it, counted
PROBLEM_REQUESTS = ("document", "fetch", "xhr", "script", "stylesheet", "image")  # what expect.requests counts
ECHO = "Failed to load resource"  # the browser's console line for a failed request: the request is the problem


def action_label(action: dict[str, Any], element: dict[str, Any] | None) -> str | None:
    """An action as what followed it names it: its element's accessible name ('Save'), else the action (the send keys
    action); None for one that only reads, waits or reports, after which the last one still holds."""
    name = str(next(iter(action), ""))
    if not name or name in UNMOVED:
        return None
    label = " ".join(str((element or {}).get("name") or "").split())
    return f"'{clip(label, LABEL_LIMIT)}'" if label else f"the {name.replace('_', ' ')} action"


def app_request(request: Request) -> bool:
    """A request the app itself makes, whose failure it must handle: a fetch or XHR, or a form's POST (a document's).
    Images, fonts, scripts and styles are not: their failures stay evidence only."""
    return request.resource_type in ("fetch", "xhr") or (request.resource_type == "document" and request.method == "POST")


def is_favicon(url: str) -> bool:
    """A site icon's URL (/favicon.ico, apple-touch-icon.png, ...): the browser fetches it on its own, so its absence
    says nothing about how the app behaves."""
    return bool(_ICON_FILE.fullmatch(urlsplit(url).path.rsplit("/", 1)[-1]))


class EvidenceRecorder:
    """Turns browser events into Observed events and keeps a summary; also notices a dead browser or preview."""

    def __init__(
        self,
        test: str,
        preview_origin: str,
        start_url: str,
        emit: Callable[[Observed], None],
        marked: Callable[[], None] = lambda: None,
    ):
        self.test, self.origin, self.start_url, self._emit = test, preview_origin, start_url, emit
        self.marked = marked  # told of each action that could move the app, as it is about to run (`acted`)
        self.summary = EvidenceSummary()
        self.visits = Visits()  # the pages the test loads
        self.disconnected = False
        self.closing = False  # set before our own teardown, whose disconnect is no evidence
        self.start_failure: str | None = None  # why the start page could not be loaded, if it could not
        self.start_loading: str | None = None  # the start page's URL while its document is still downloading
        self._start_seen = False
        self.start_decided = asyncio.Event()  # set once the start page answered, or failed to
        self._start_request: Request | None = None
        self._failed_urls: set[str] = set()  # whose console echo ("Failed to load resource") adds nothing as a cause
        self.access_denied: list[str] = []  # pages refused to us (401/403) or sent off to another host: HTTP facts
        self.protected_start = False  # the start page asked for credentials, and no page of the preview answered since
        self.last_action: str | None = None  # the agent's (or the replay's) last action that could move the app
        self.server_errors: list[ServerError] = []
        self.navigations_blocked: list[BlockedNavigation] = []  # by browser-use's own watchdog
        self._after: dict[Request, str] = {}  # the app's requests in flight, and the action each followed
        self.problems: list[PageProblem] = []  # on the app's pages, in order, at most PROBLEMS_BOUND of each kind
        self.problems_dropped: dict[ProblemKind, int] = {}  # past the bound
        self._kept: dict[ProblemKind, int] = {}  # seen of each kind

    def attach(self, browser: Browser, context: BrowserContext) -> None:
        """Watch the test's own context in a browser that other tests use before and after it."""
        browser.on("disconnected", self._on_disconnected)
        every_page(context, self._watch)
        self.visits.attach(context)

    def detach(self, browser: Browser) -> None:
        browser.remove_listener("disconnected", self._on_disconnected)

    def acted(self, action: dict[str, Any], element: dict[str, Any] | None) -> None:
        """An action of the agent or the replay is about to run (not the start navigation): what the app requests from
        now on follows it, unless it only reads, waits or reports."""
        label = action_label(action, element)
        if label is not None:
            self.last_action = label
            self.marked()

    def unreachable(self, blocked: list[BlockedNavigation], unfinished: bool) -> str | None:
        """The infrastructure error the watchers saw, if any: a start page that never answered or loaded (or was sent
        to a host the test may not visit), a browser that went away before the agent (`unfinished`) reported."""
        if self.start_failure is not None and blocked:  # it answered, with another host
            host = blocked[0].host
            return (
                f"the preview sent the start page to another host, {host}, which this test may not visit: if that is "
                "its host's login, give the protection-bypass header with `extra-headers` (or `http-credentials` for "
                f"basic auth); if the test should go there, add {host} to its `allowed_domains`"
            )
        if self.start_failure is not None:
            return f"preview unreachable: {self.start_failure}"
        if self.start_loading is not None:
            return f"preview unreachable: the start page never finished loading ({self.start_loading})"
        if self.disconnected and unfinished:
            return "the browser crashed or was closed before the agent finished"
        return None

    def tell(self, run: AgentRun, blocked: list[BlockedNavigation]) -> None:
        """What the watchers saw into the run's facts, with the navigations the request policy `blocked`."""
        run.evidence, run.access_denied, run.protected_start = self.summary, list(self.access_denied), self.protected_start
        run.server_errors = list(self.server_errors)
        run.problems, run.problems_dropped = list(self.problems), dict(self.problems_dropped)
        run.navigations_blocked = [*blocked, *self.navigations_blocked]

    def _watch(self, page: Page) -> None:
        page.on("request", self._on_request)
        page.on("console", self._on_console)
        page.on("pageerror", lambda error: self._on_page_error(error, page))
        page.on("requestfailed", self._on_request_failed)
        page.on("requestfinished", self._on_request_finished)
        page.on("response", self._on_response)

    def llm_fault(self, fault: LLMFault) -> None:
        """A failed LLM call: the provider failed (llm_error) or its answer was no valid agent output (output_error)."""
        self._record(
            "llm_error" if fault.kind == "provider" else "output_error",
            {"purpose": fault.purpose, "status": fault.status, "message": clip(fault.message, DETAIL_LIMIT)},
        )

    def screenshot_withheld(self, why: str) -> None:
        """A screenshot (ours or the LLM's) was not taken because its secrets could not be masked for certain."""
        self._record("screenshot_withheld", {"message": clip(why, DETAIL_LIMIT)})

    def browser_error(self, event: BrowserErrorEvent) -> None:
        """browser-use's own browser errors; the ones worth evidence are navigations it refused to leave the site."""
        if event.error_type in BLOCKED:
            blocked = blocked_navigation(str(event.details.get("url", "")), self.last_action)
            self.navigations_blocked.append(blocked)
            said = {"host": blocked.host} if blocked.not_a_url is None else {"not_a_url": blocked.not_a_url}
            self._record("navigation_blocked", {**said, "by": "browser-use"})

    def _on_disconnected(self, _: Any) -> None:
        if self.closing:
            return
        self.disconnected = True
        self._record("browser_disconnected", {"message": "the browser closed or crashed"})

    def _on_console(self, message: ConsoleMessage) -> None:
        if message.type != "error":
            return
        text, url = clip(message.text, DETAIL_LIMIT), message.location.get("url", "")
        if is_favicon(url):
            self._ignored("favicon", {"text": text, "url": url})
            return
        page = message.page.url if message.page is not None else ""
        if page.startswith(("about:", "data:")):  # no page of the app: browser-use's loading animation on a blank tab
            self._ignored("not a page of the app", {"text": text, "url": url, "page": page})
            return
        self.summary.console_errors += 1
        if not message.text.startswith(ECHO):
            self._problem(PageProblem(kind=ProblemKind.CONSOLE_ERROR, page=page, message=text))
        if url not in self._failed_urls:
            where = f" (at {url})" if url and url not in text else ""
            self.summary.first_console_error = self.summary.first_console_error or clip(text + where, DETAIL_LIMIT)
        self._emit(ConsoleError(text=text, url=url).observed(self.test, error=True))

    def _on_page_error(self, error: Exception, page: Page) -> None:
        text = clip(str(error) or type(error).__name__, DETAIL_LIMIT)
        name = getattr(error, "name", None)  # the page's own: TypeError, ...
        named = clip(f"{name}: {error}", DETAIL_LIMIT) if name and str(error) else text
        self._problem(PageProblem(kind=ProblemKind.PAGE_ERROR, page=page.url, message=named))
        self.summary.page_errors += 1
        self.summary.first_page_error = self.summary.first_page_error or text
        self._emit(PageError(message=text).observed(self.test, error=True))

    def _on_request(self, request: Request) -> None:
        if self.last_action is not None and app_request(request) and self._same_origin(request.url):
            self._after[request] = self.last_action

    def _on_request_failed(self, request: Request) -> None:
        self._after.pop(request, None)
        failure = request.failure or "failed"
        self._note_start(request, f"{failure} loading {request.url}")
        self._on_request_finished(request)
        if not self._same_origin(request.url) or failure == "net::ERR_ABORTED":
            return
        self._failed(
            f"{request.method} {request.url}: {failure}",
            {"method": request.method, "url": request.url, "failure": failure},
            request,
        )
        self._request_problem(request, None, f"failed: {failure}")

    def _on_request_finished(self, request: Request) -> None:
        if request is self._start_request:
            self.start_loading = None

    def _on_response(self, response: Response) -> None:
        request = response.request
        if request.is_navigation_request() and request.frame.parent_frame is None:
            self._note_access(response)
        if response.status >= 500:
            self._note_start(request, f"HTTP {response.status} from {response.url}")
        elif not 300 <= response.status < 400:  # a redirect decides nothing: where it leads (or loops) does
            self._note_start(request, None)
        if request.is_navigation_request() and request.frame.parent_frame is None:
            self._note_protected(request, response)
        self._note_server_error(request, response)
        if response.status >= 400 and self._same_origin(response.url):
            self._failed(
                f"{request.method} {response.url}: HTTP {response.status}",
                {"method": request.method, "url": response.url, "status": response.status},
                request,
            )
            self._request_problem(request, response.status, f"answered {response.status}")

    def _note_server_error(self, request: Request, response: Response) -> None:
        """A 5xx answer to a request the app made after an action is a fact for the verdict; a success of the same
        method and path afterwards (an app that retries) clears the earlier errors."""
        after = self._after.pop(request, None)
        if not app_request(request) or not self._same_origin(response.url):
            return
        method, path = request.method, urlsplit(response.url).path or "/"  # never the query: it may hold a secret
        if response.status >= 500 and after is not None:
            self.server_errors.append(ServerError(method, path, response.status, after))
        elif response.status < 400:
            self.server_errors = [
                dataclasses.replace(e, succeeded_later=True) if (e.method, e.path) == (method, path) else e
                for e in self.server_errors
            ]

    def _note_protected(self, request: Request, response: Response) -> None:
        """The start page asking for credentials (401, or 403 with a WWW-Authenticate challenge: basic auth, a host's
        login wall) marks the preview protected, until a page of the preview answers: then it was reached."""
        if request is self._start_request and self._same_origin(response.url):
            challenge = response.headers.get("www-authenticate")
            self.protected_start = response.status == 401 or (response.status == 403 and challenge is not None)
        elif self._same_origin(response.url) and 200 <= response.status < 300:
            self.protected_start = False

    def _note_access(self, response: Response) -> None:
        """A page the server would not show us, or sent to another host: what a login wall looks like over HTTP, read
        from status and headers only (never the page's text). The path only: a query may hold a secret."""
        parts = urlsplit(response.url)
        fact = None
        if response.status in (401, 403):
            challenge = response.headers.get("www-authenticate")
            asked = f" (WWW-Authenticate: {clip(' '.join(challenge.split()), 120)})" if challenge else ""
            fact = f"the server answered HTTP {response.status} to {parts.scheme}://{parts.netloc}{parts.path}{asked}"
        elif 300 <= response.status < 400:
            target = urlsplit(response.headers.get("location", "")).hostname
            if target and target != parts.hostname:
                fact = f"{parts.hostname} redirected the page to another host, {target}"
        if fact and fact not in self.access_denied:
            self.access_denied.append(fact)
            self._record("access_denied", {"message": fact})

    def _note_start(self, request: Request, failure: str | None) -> None:
        """The first main-document load of the start URL decides whether the preview answered at all."""
        if self._start_seen or not request.is_navigation_request() or request.frame.parent_frame is not None:
            return
        self._start_seen = True
        self.start_failure = failure
        self.start_decided.set()
        if failure is None:  # it answered; whether its document ever finishes downloading is told by requestfinished
            self._start_request, self.start_loading = request, request.url

    def _failed(self, text: str, detail: dict[str, Any], request: Request) -> None:
        if request.resource_type == "other" and is_favicon(request.url):
            self._ignored("favicon", detail)
            return
        self._failed_urls.add(request.url)
        self.summary.failed_requests += 1
        self.summary.first_failed_request = self.summary.first_failed_request or clip(text, DETAIL_LIMIT)
        self._record("failed_request", detail)

    def _same_origin(self, url: str) -> bool:
        return origin_of(url) == self.origin

    def _request_problem(self, request: Request, status: int | None, what: str) -> None:
        """A same-origin request of a kind expect.requests counts that answered 400 or above (`status`) or failed,
        unless it is the site's icon: `GET /img/a.png answered 404 (image)`, on the page that made it."""
        kind = request.resource_type
        if kind not in PROBLEM_REQUESTS or is_favicon(request.url):
            return
        target = path_of(request.url)
        page = request.url if request.is_navigation_request() else _page_url(request)
        self._problem(
            PageProblem(
                kind=ProblemKind.BROKEN_IMAGE if kind == "image" else ProblemKind.HTTP_ERROR,
                page=page,
                target=target,
                status=status,
                message=clip(f"{request.method} {target} {what} ({kind})", DETAIL_LIMIT),
                resource_type=kind,
            )
        )

    def _problem(self, problem: PageProblem) -> None:
        """Kept when seen on a page of the app (its path alone: a query may hold a secret), up to the bound of its kind."""
        if not self._same_origin(problem.page):
            return
        kept = self._kept[problem.kind] = self._kept.get(problem.kind, 0) + 1
        if kept > PROBLEMS_BOUND:
            self.problems_dropped[problem.kind] = kept - PROBLEMS_BOUND
            return
        self.problems.append(problem.model_copy(update={"page": path_of(problem.page)}))

    def _record(self, kind: ObservedKind, detail: dict[str, Any]) -> None:
        self._emit(Observed(name=self.test, kind=kind, error=True, detail=detail))

    def _ignored(self, why: str, detail: dict[str, Any]) -> None:
        """Kept in the event log, but neither counted nor a cause: what every browser does by itself."""
        self._emit(Observed(name=self.test, kind="ignored", error=False, detail={"why": why, **detail}))


def path_of(url: str) -> str:
    """A URL's path, never its query or fragment (they may hold a secret)."""
    return urlsplit(url).path or "/"


def _page_url(request: Request) -> str:
    """The URL of the page a request was made on ('' when it has none: a service worker's)."""
    try:
        return request.frame.page.url
    except Exception:
        return ""


def blocked_navigation(url: str, after: str | None) -> BlockedNavigation:
    """A navigation browser-use refused: to a host (the host alone: the URL's query may hold a secret), or to what was
    no URL at all (a model's placeholder, 'url_value'), which no allowed host would have let through."""
    parts = urlsplit(url)
    if parts.scheme or parts.netloc:
        return BlockedNavigation(parts.hostname or f"{parts.scheme}:", after)
    return BlockedNavigation("", after, not_a_url=clip(url, LABEL_LIMIT))
