"""Playwright's device descriptors, read offline from the installed Playwright package (never imported), and a test's
emulation: its device's options under the test's own viewport, locale, timezone and color scheme."""

from __future__ import annotations

import difflib
import functools
import importlib.util
import json
import re
import zoneinfo
from pathlib import Path
from typing import Any

from preview_qa.results import ColorScheme, Emulation, Viewport

# Playwright (1.5x and later) bundles its descriptors (packages/isomorphic/deviceDescriptorsSource.json) into its
# driver's coreBundle.js as a JavaScript object literal, whose keys esbuild leaves unquoted when they are identifiers.
BUNDLE = ("driver", "package", "lib", "coreBundle.js")
LITERAL_START = "deviceDescriptorsSource_default = "
_BARE_KEY = re.compile(r"^(\s*)([A-Za-z_$][\w$]*):", re.MULTILINE)
NEAREST = 3


class DevicesUnavailable(Exception):
    """The installed Playwright's device list could not be read."""


def bundle_path() -> Path:
    spec = importlib.util.find_spec("playwright")  # finds the package without importing it
    if spec is None or not spec.submodule_search_locations:
        raise DevicesUnavailable("Playwright is not installed")
    return Path(next(iter(spec.submodule_search_locations)), *BUNDLE)


@functools.cache
def descriptors() -> dict[str, dict[str, Any]]:
    """Every device Playwright knows, by name, as Playwright's own JSON has it (userAgent, viewport, ...)."""
    path = bundle_path()
    try:
        text = path.read_text(encoding="utf-8")
        start = text.index(LITERAL_START) + len(LITERAL_START)
        literal = _BARE_KEY.sub(r'\1"\2":', text[start : text.index("\n// ", start)])
        found, _ = json.JSONDecoder().raw_decode(literal)
    except (OSError, ValueError) as e:
        raise DevicesUnavailable(f"Playwright's device list could not be read from {path} ({type(e).__name__})") from None
    if not isinstance(found, dict) or not found:
        raise DevicesUnavailable(f"Playwright's device list in {path} is empty")
    return found


def nearest(name: str, names: list[str]) -> list[str]:
    """The names most like `name`, case ignored, best first."""
    by_lower = {n.lower(): n for n in names}
    return [by_lower[n] for n in difflib.get_close_matches(name.lower(), list(by_lower), n=NEAREST, cutoff=0.5)]


def _unknown(what: str, name: str, names: list[str], fallback: str) -> str:
    close = nearest(name, names)
    hint = "did you mean " + " or ".join(f"'{n}'" for n in close) + "?" if close else fallback
    return f"unknown {what} '{name}'; {hint}"


def device_problem(name: str) -> str | None:
    """Why `name` is no device Playwright knows (None if it is one), with the nearest names."""
    try:
        known = descriptors()
    except DevicesUnavailable as e:
        return str(e)
    if name in known:
        return None
    return _unknown("device", name, list(known), "see Playwright's device list (e.g. 'iPhone 15', 'Pixel 7', 'Desktop Chrome')")


@functools.cache
def timezones() -> frozenset[str]:
    """Every IANA zone name this machine knows: zoneinfo reads its directories anew on each call (about 30 ms), and a
    manifest's every test with a `timezone:` asks."""
    return frozenset(zoneinfo.available_timezones())


def timezone_problem(name: str) -> str | None:
    """Why `name` is no IANA time zone (None if it is one), with the nearest names."""
    zones = timezones()
    if name in zones:
        return None
    return _unknown("timezone", name, sorted(zones), "give an IANA name such as 'Europe/Berlin' or 'America/New_York'")


def emulation(
    device: str | None,
    viewport: Viewport | None = None,
    locale: str | None = None,
    timezone: str | None = None,
    color_scheme: ColorScheme | None = None,
) -> Emulation | None:
    """The test's emulation: the device's descriptor, each key the test gives in its place; None when it gives none."""
    if device is None and viewport is None and locale is None and timezone is None and color_scheme is None:
        return None
    own: dict[str, Any] = {}
    if device is not None:
        descriptor = descriptors()[device]
        own = {
            "device": device,
            "viewport": Viewport.model_validate(descriptor["viewport"]),
            "device_scale_factor": descriptor["deviceScaleFactor"],
            "is_mobile": descriptor["isMobile"],
            "has_touch": descriptor["hasTouch"],
            "user_agent": descriptor["userAgent"],
        }
    given = {"viewport": viewport, "locale": locale, "timezone": timezone, "color_scheme": color_scheme}
    return Emulation(**{**own, **{key: value for key, value in given.items() if value is not None}})
