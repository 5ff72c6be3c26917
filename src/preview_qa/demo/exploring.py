"""`preview-qa demo --explore` (#68, 7): the demo shop served twice, as the default branch and as a pull request that
breaks two things a sweep sees (DemoShop(breaks=True): the product page's stock request answers 500, signup logs an
error), explored with no LLM and no API key. The demo is a smoke test too: it succeeds when exactly those two come out
as new confirmed findings (the checkout's own bugs are on main too: listed apart, never the PR's)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from preview_qa.config import RunConfig
from preview_qa.demo.pages import PR_SIGNUP_ERROR, STOCK_API
from preview_qa.demo.shop import DemoShop
from preview_qa.explore.explorer import Exploration, explore
from preview_qa.results import ExploreResult, FindingKind

PLANTED = {  # what the PR breaks, as explore names it
    (FindingKind.HTTP_ERROR, "/product"): f"GET {STOCK_API} answers 500",
    (FindingKind.CONSOLE_ERROR, "/signup"): f"the console error {PR_SIGNUP_ERROR!r}",
}


def explore_demo(out: Path, headless: bool, chromium: str | None, env: Mapping[str, str]) -> ExploreResult:
    """The PR's copy explored against main's, from `/` (the shop has no sitemap), into `out`."""
    with DemoShop() as main, DemoShop(breaks=True) as pr:
        config = RunConfig(manifest=Path("explore.yml"), base_url=pr.url, out=out, headless=headless, chromium=chromium)
        return explore(Exploration(config, main.url), env)


def off_script(result: ExploreResult) -> bool:
    """The demo's own rule, instead of explore's: it fails unless it found what the PR plants, and nothing else new."""
    return _found(result) != set(PLANTED) or bool(result.uncompared)


def told(result: ExploreResult, out: Path) -> list[str]:
    """What the demo says after explore's own lines (each break, each page not compared): what main has too, and
    whether what the PR breaks is what the demo plants."""
    on_main = sorted({f"{f.kind.value} on {f.url}" for f in result.findings if f.on_baseline})
    lines = [f"demo: also on main, so not the PR's doing: {', '.join(on_main)}"] if on_main else []
    if not off_script(result):
        lines.append(
            f"demo: explore found both things the PR breaks ({'; '.join(PLANTED.values())}), each confirmed by its "
            f"repro, and nothing else new. Open {out / 'findings.md'} or {out / 'results.json'}."
        )
        return lines
    missed = [what for key, what in PLANTED.items() if key not in _found(result)]
    more = sorted(f"{kind.value} on {page}" for kind, page in _found(result) - set(PLANTED))
    lines += [f"demo: explore missed what the PR breaks: {what}" for what in missed]
    lines += [f"demo: explore raised what the demo does not plant: {what}" for what in more]
    return lines


def _found(result: ExploreResult) -> set[tuple[FindingKind, str]]:
    return {(f.kind, f.url) for f in result.breaks}
