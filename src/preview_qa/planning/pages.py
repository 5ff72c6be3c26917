"""The preview's pages as planning reads them: each in a fresh context under the run's request policy, read once,
their links kept so that a dynamic segment takes its value from any link the preview showed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from preview_qa.app import Prepared
from preview_qa.config import RunConfig
from preview_qa.engine.saved_state import BrowserState
from preview_qa.manifest.models import Manifest
from preview_qa.results import error_line
from preview_qa.selection.route import Route

if TYPE_CHECKING:
    from preview_qa.agent.browser_agents import RunAgents
    from preview_qa.agent.page.survey import PageFacts


@dataclass(frozen=True)
class Unread:
    """Why a page was not read: `answered` when the preview answered (404, a page that led elsewhere...), else it did
    not answer at all (what stops planning)."""

    why: str
    answered: bool = True


class Pages:
    """Reads the preview's pages for planning; remembers each page read signed out, and its links."""

    def __init__(self, agents: RunAgents, prepared: Prepared, config: RunConfig, manifest: Manifest):
        self.agents, self.prepared, self.config, self.manifest = agents, prepared, config, manifest
        self.read: dict[str, PageFacts | Unread] = {}  # URL -> the page read there signed out

    async def url_for(self, route: Route, base: str) -> str | Unread:
        """The URL to read the route at, on `base` (its app's preview). A dynamic route's value comes from a link to one
        of its pages on that preview: on its static part's page, the start page, or any page of it read so far."""
        if not route.dynamic:
            return base + route.plain
        looked = []
        read_here = [urlsplit(url).path or "/" for url in self.read if url.startswith(base + "/")]
        for path in dict.fromkeys([route.static_prefix, "/", *read_here]):
            facts = await self.visit(base + path)
            if isinstance(facts, Unread):
                looked.append(f"{path} ({facts.why.removeprefix('not drafted: its page ')})")
                continue
            looked.append(path)
            if found := self._link_to(route, facts.links, base):
                return base + found
        where = ", ".join(looked)
        return Unread(f"needs a value for its dynamic segment: no link to one of its pages on {where}")

    def _link_to(self, route: Route, links: list[str], base: str) -> str | None:
        origin = urlsplit(base).netloc
        for link in links:
            parts = urlsplit(link)
            if parts.netloc == origin and route.serves(parts.path):  # not a page a more specific route serves
                return parts.path
        return None

    async def visit(self, url: str, state: BrowserState | None = None) -> PageFacts | Unread:
        """The page at `url` in a fresh context of the run's browsers (holding `state`, a saved login, if given), under
        the run's request policy; or why not. A page read signed out is read once."""
        if state is None and url in self.read:
            return self.read[url]
        facts = await self._survey(url, state)
        if state is None:
            self.read[url] = facts
        return facts

    async def _survey(self, url: str, state: BrowserState | None) -> PageFacts | Unread:
        from preview_qa.agent.browsers.storage import load_state
        from preview_qa.agent.guards.network import RequestPolicy
        from preview_qa.agent.page.survey import survey
        from preview_qa.engine.preview import origin_of

        hosts = [urlsplit(url).hostname or "", *self.manifest.defaults.allowed_domains]
        redactor = self.prepared.redactor
        try:
            async with self.agents.pool.lease() as lease:
                origin, headers = origin_of(url), self.config.preview_headers  # to the page's own preview only
                policy = RequestPolicy("preview-qa plan", hosts, redactor, lambda _e: None, origin, headers)
                await policy.install(lease.context)
                if state is not None:
                    await load_state(lease.context, state, hosts)
                facts = await survey(lease.page, url)
        except Exception as e:
            return Unread(f"not drafted: its page could not be read ({redactor.text(clean_error(e))})", answered=False)
        if facts.status is None or facts.status >= 400:
            return Unread(f"not drafted: its page answered {facts.status or 'nothing'}")
        return facts


def clean_error(error: Exception) -> str:
    """An error on one line without Playwright's call log (`Page.goto: net::ERR_CONNECTION_REFUSED at URL`)."""
    return error_line(str(error).split("Call log:", 1)[0])
