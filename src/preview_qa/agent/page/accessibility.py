"""axe-core on the live final page: the bundled axe.min.js injected into each frame, its violations as plain facts."""

from __future__ import annotations

import contextlib
import functools
import re
from importlib import resources
from typing import TYPE_CHECKING, Any

from preview_qa.manifest.models import Accessibility
from preview_qa.verdict.accessibility import Violation

if TYPE_CHECKING:
    from playwright.async_api import Page

FRAME_WAIT_MS = 3000  # axe-core's wait for a frame's answer (its default, 60 s, would outlast the test)
# Runs in the page: the page's own code could replace window.axe, so the version is read back and checked too.
_RUN = """async ([context, options]) => {
  const known = new Set(window.axe.getRules().map(r => r.ruleId));
  const unknown = Object.keys(options.rules).filter(r => !known.has(r));
  if (unknown.length) return {version: window.axe.version, unknown};
  const results = await window.axe.run(context, options);
  return {version: window.axe.version, violations: results.violations.map(v => ({
    rule: v.id, impact: v.impact, help: v.help, targets: v.nodes.map(n => n.target.flat(Infinity).join(' >>> '))}))};
}"""


@functools.cache
def axe_source() -> str:
    """axe-core's own axe.min.js, as the axe-playwright-python wheel ships it: no network, no CDN."""
    return resources.files("axe_playwright_python").joinpath("axe.min.js").read_text(encoding="utf-8")


def axe_version() -> str:
    found = re.search(r"axe v([0-9][0-9.]*)", axe_source()[:200])
    return found.group(1) if found else "unknown version"


async def violations_on(page: Page, wanted: Accessibility) -> list[Violation]:
    """Every axe-core violation on the page (all impacts: the verdict applies the threshold), in the top document and
    each frame axe-core could be injected into. Raises when axe-core cannot run: an unchecked page is no pass."""
    source = axe_source()
    for frame in page.frames:  # axe-core in the top document asks each frame's own copy about that frame
        if frame is not page.main_frame:
            with contextlib.suppress(Exception):  # a frame gone meanwhile; axe-core names frames it could not reach
                await frame.evaluate(source)
    await page.main_frame.evaluate(source)
    context = {"exclude": list(wanted.exclude)}  # the include left out is the whole document
    options: dict[str, Any] = {
        "resultTypes": ["violations"],
        "frameWaitTime": FRAME_WAIT_MS,
        "rules": {rule: {"enabled": False} for rule in wanted.skip_rules},
    }
    found = await page.main_frame.evaluate(_RUN, [context, options])
    if found.get("version") != axe_version():
        raise RuntimeError(f"the page replaced axe-core (found version {found.get('version')!r})")
    if found.get("unknown"):
        names = ", ".join(map(repr, found["unknown"]))
        raise ValueError(
            f"expect.accessibility.skip_rules names {names}, which axe-core {axe_version()} does not "
            "have; leave it out or use one of axe-core's rule ids (docs/manifest.md#accessibility)"
        )
    return [
        Violation(rule=str(v["rule"]), impact=v["impact"], help=str(v["help"]), targets=[str(t) for t in v["targets"]])
        for v in found["violations"]
    ]
