"""The fixture site the e2e tests serve (DemoSite): the demo shop's pages and the tests' own, each kind in its module."""

from tests.site.fixture_site import APP_COOKIE, COLLECTOR_HOST, DEMO_TOTP_SEED, DemoSite
from tests.site.pages import APP_PAGES

__all__ = ["APP_COOKIE", "APP_PAGES", "COLLECTOR_HOST", "DEMO_TOTP_SEED", "DemoSite"]
