"""axe-core on the live final page: the bundled axe.min.js injected into each frame, its violations as plain facts."""

from __future__ import annotations

import contextlib
import functools
import re
from importlib import resources
from typing import TYPE_CHECKING, Any

from preview_qa.manifest.models import Accessibility
from preview_qa.results import AccessibilityViolation, ViolatingElement, one_line

if TYPE_CHECKING:
    from playwright.async_api import Page

SUMMARY_LIMIT = 500
FRAME_WAIT_MS = 3000  # axe-core's wait for a frame's answer (its default, 60 s, would outlast the test)
# Runs in the page: the page's own code could replace window.axe, so the version is read back and checked too. Each
# element's text is read while axe-core still holds it (elementRef); its data are the scalars of its failed checks.
_RUN = """async ([context, options]) => {
  const known = new Set(window.axe.getRules().map(r => r.ruleId));
  const unknown = Object.keys(options.rules).filter(r => !known.has(r));
  if (unknown.length) return {version: window.axe.version, unknown};
  const results = await window.axe.run(context, options);
  const data = n => Object.assign({}, ...[...n.any, ...n.all, ...n.none].map(c => c.data)
    .filter(d => d && typeof d === 'object')
    .map(d => Object.fromEntries(Object.entries(d).filter(([, v]) => ['string', 'number', 'boolean'].includes(typeof v)))));
  const text = n => (n.element && (n.element.innerText || n.element.textContent) || '')
    .replace(/\\s+/g, ' ').trim().slice(0, 200);
  return {version: window.axe.version, violations: results.violations.map(v => ({
    rule: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map(n => ({
      target: n.target.flat(Infinity).join(' >>> '), text: text(n), summary: n.failureSummary || '', data: data(n)}))}))};
}"""


@functools.cache
def axe_source() -> str:
    """axe-core's own axe.min.js, as the axe-playwright-python wheel ships it: no network, no CDN."""
    return resources.files("axe_playwright_python").joinpath("axe.min.js").read_text(encoding="utf-8")


def axe_version() -> str:
    found = re.search(r"axe v([0-9][0-9.]*)", axe_source()[:200])
    return found.group(1) if found else "unknown version"


async def violations_on(page: Page, wanted: Accessibility) -> list[AccessibilityViolation]:
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
        "elementRef": True,
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
    return [_violation(v) for v in found["violations"]]


def _violation(found: dict[str, Any]) -> AccessibilityViolation:
    return AccessibilityViolation(
        rule=str(found["rule"]),
        impact=found["impact"],
        help=str(found["help"]),
        elements=[
            ViolatingElement(
                target=str(n["target"]),
                text=str(n.get("text") or ""),
                summary=one_line(str(n.get("summary") or ""), SUMMARY_LIMIT),
                data={str(k): v for k, v in (n.get("data") or {}).items() if isinstance(v, str | int | float | bool)},
            )
            for n in found["nodes"]
        ],
    )
