"""Process-wide changes to browser-use's behaviour, each with why; applied once by `apply()` before a run's browsers."""

from __future__ import annotations

from typing import Any

from browser_use.browser.watchdogs.aboutblank_watchdog import AboutBlankWatchdog

_applied = False


async def _no_loading_animation(self: AboutBlankWatchdog, target_id: Any, browser_session_label: str) -> None:
    """browser-use draws a loading animation on every about:blank tab, whose logo comes from its CDN
    (cf.browser-use.com): one request per test from the user's CI to a third party, which a locked-down runner
    refuses. A test's first page stays blank until the agent's first navigation instead."""


def apply() -> None:
    global _applied
    if not _applied:
        AboutBlankWatchdog._show_dvd_screensaver_loading_animation_cdp = _no_loading_animation  # type: ignore[method-assign]
        _applied = True
