"""Which preview each test and each changed route is on, in a monorepo whose apps have previews of their own
(`--base-url web=URL`, the manifest's `apps:`): a route is read on its own app's preview, never on another app's."""

from __future__ import annotations

from urllib.parse import urlsplit

from preview_qa.config import RunConfig
from preview_qa.manifest.models import TestSpec
from preview_qa.selection.route import Route


class Previews:
    """The previews of a run's tests and of the routes a change maps to. A route of an app with a URL is on it; a
    route of the repository's root (or a route the manifest gives) is on --base-url's plain URL, and so is every route
    when the change touches one app only; a route of one of several apps with no URL is on none."""

    def __init__(self, config: RunConfig, routes: list[Route]):
        self.config = config
        self.several = len({r.app for r in routes if r.app}) > 1  # the change touches more than one app

    def of_route(self, route: Route) -> str | None:
        if route.app and (url := self.config.url_of(route.app)):
            return url
        return self.config.base_url if not route.app or not self.several else None

    def of_test(self, spec: TestSpec) -> str | None:
        """Where the test starts: its start URL's origin, or its app's preview (None: its app has no URL)."""
        if "://" in spec.start:
            return spec.start
        return self.config.url_of(spec.app)

    def same(self, spec: TestSpec, route: Route) -> bool:
        """Whether the test runs on the route's preview (the same host)."""
        test, mine = self.of_test(spec), self.of_route(route)
        return test is not None and mine is not None and urlsplit(test).netloc == urlsplit(mine).netloc

    def unknown(self, route: Route) -> str:
        """Why a route is on no preview, in words with the fix."""
        if not route.app:  # the repository's own route, and only apps' previews were given
            return "it is a route of the repository's root, and --base-url gave only apps' previews: give the plain one too"
        name = route.app.rsplit("/", 1)[-1]
        return (
            f"its app {route.app} has no preview URL of its own, and the change touches several apps: give --base-url "
            f"{name}=URL (or apps: {{{name}: URL}} in the manifest)"
        )
