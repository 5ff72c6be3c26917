"""`explore` as one job: the pages found, swept on the preview and on the baseline by ordinary tests of exact steps
(no LLM: the browser's errors, failed requests, broken links, axe-core, a screenshot each), what the preview shows and
the baseline does not, and each of those run once more on both sides as its repro: only a repro that fails on the
preview for its check and passes on the baseline confirms a finding."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from preview_qa import app
from preview_qa.config import RunConfig
from preview_qa.explore.pages import discover
from preview_qa.manifest import loader
from preview_qa.manifest.models import Manifest
from preview_qa.results import ExploreResult, Finding, FindingKind, RunResult, Status, TestResult
from preview_qa.selection.routes import map_files
from preview_qa.verdict.checks.visual import compare
from preview_qa.verdict.findings import Seen, compared, confirmation, finding, repro, seen_on

SWEEP_CHECKS: dict[str, Any] = {
    "console_errors": "none",
    "requests": {"failed": "none"},
    "links": {"broken": "none"},
    "accessibility": {},
}
VISUAL_MAX_DIFF = 0.001  # expect.visual's default: the share of pixels that may differ
SWEEP = "sweep "  # a sweep test's name: "sweep /products"
SIDES = ("preview", "baseline")


@dataclasses.dataclass(frozen=True)
class Exploration:
    """What `explore` is asked: the two deployments, the run's settings (headers, credentials, Chromium...), the
    user's manifest for its defaults (allowed_domains, secrets, device), the pages given and the bound."""

    config: RunConfig  # base_url: the preview
    baseline_url: str
    max_pages: int = 30
    given: tuple[str, ...] = ()
    manifest: Manifest | None = None
    changed: list[str] | None = None  # the PR's changed files: their routes are explored first


def explore(job: Exploration, env: Mapping[str, str]) -> ExploreResult:
    started, clock = datetime.now(UTC).isoformat(timespec="seconds"), time.monotonic()
    config, out = job.config, job.config.out
    assert config.base_url is not None
    result = ExploreResult(base_url=config.base_url, baseline_url=job.baseline_url, started_at=started)
    given, result.notes = _changed_pages(job)
    pages, found = asyncio.run(discover(config.base_url, config.preview_headers, job.max_pages, given))
    result.notes += found
    result.pages = pages
    quiet = {k: v for k, v in env.items() if not k.startswith("GITHUB_")}  # the sweeps' own runs annotate nothing
    on = _on_both(result, job, "sweep", [_sweep(page) for page in pages], quiet)
    new: list[Seen] = []
    for page in pages:
        preview, baseline = (on[side].get(SWEEP + page) for side in SIDES)
        why = _not_compared(preview, "preview") or _not_compared(baseline, "baseline")
        if why is not None:
            result.uncompared[page] = why
            continue
        assert preview is not None and baseline is not None  # _not_compared says why a run is missing
        for seen, there in compared(seen_on(page, preview), seen_on(page, baseline)):
            if there:
                result.findings.append(finding(seen, True, False, "the baseline shows it too: not this PR's doing"))
            else:
                new.append(seen)
        changed = _visual(page, out, "sweep", preview, baseline)
        new += [changed] if changed else []
    result.findings += _confirmed(new, job, result, quiet)
    result.duration_s = round(time.monotonic() - clock, 2)
    return result


def _changed_pages(job: Exploration) -> tuple[list[str], list[str]]:
    """The pages given, then the changed files' routes (by the manifest's `routes:` and the frameworks' conventions, as
    `plan` maps them); a dynamic route ([slug]) is named, not guessed."""
    if job.changed is None:
        return list(job.given), []
    mapped = map_files(job.changed, job.manifest.routes if job.manifest else {}, None)
    static = [r.path for r in mapped.routes if "[" not in r.path]
    dynamic = [r.shown for r in mapped.routes if "[" in r.path]  # [slug], and [[lang]]'s page is the app's to say
    notes = list(mapped.notes)
    notes += [f"changed route {r} has a segment to fill ([...]): give one of its pages with --page" for r in dynamic]
    if not mapped.routes:
        notes.append("the changed files map to no route: the site is explored from its sitemap or /")
    return [*job.given, *static], notes


def _not_compared(run: TestResult | None, side: str) -> str | None:
    """Why a page's sweep on `side` cannot be compared: it errored (the deployment down, a crash) or never ran."""
    if run is None:
        return f"its sweep on the {side} did not run"
    return f"its sweep on the {side} errored: {run.reason}" if run.status is Status.ERRORED else None


def _sweep(page: str) -> dict[str, Any]:
    return {"name": SWEEP + page, "steps": [{"open": page}], "expect": SWEEP_CHECKS}


def _on_both(
    result: ExploreResult, job: Exploration, kind: str, tests: list[dict[str, Any]], env: Mapping[str, str]
) -> dict[str, dict[str, TestResult]]:
    """The tests run on each side (`kind`-preview, `kind`-baseline), each side's results by test name; the manifest
    they ran is kept for the reporter to write beside them (`kind`s.yml: `preview-qa run` runs it as it stands)."""
    manifest = _manifest(job, tests, result, f"{kind}s.yml")
    on = {}
    for side, url in zip(SIDES, (job.config.base_url, job.baseline_url), strict=True):
        out = job.config.out / f"{kind}-{side}"
        # one plain run a side: no comment, cache, baseline run or retry of its own
        config = dataclasses.replace(
            job.config,
            manifest=Path(manifest.path),
            base_url=url,
            out=out,
            comment=False,
            cache=None,
            baseline_url=None,
            retries=0,
        )
        app.execute(manifest, config, env)
        result.runs.append(out.name)
        # as written: the artifacts' paths are the reporters' (the run's own result holds the bytes' events, not them)
        run = RunResult.model_validate_json((out / "results.json").read_text(encoding="utf-8"))
        on[side] = {t.name: t for t in run.tests}
    return on


def _manifest(job: Exploration, tests: list[dict[str, Any]], result: ExploreResult, name: str) -> Manifest:
    """The tests as a manifest, with the user's defaults that say how to reach and read the app (not its checks, tasks
    or saved logins)."""
    kept = ("allowed_domains", "secrets", "device", "viewport", "locale", "timezone", "color_scheme", "dialogs", "timeout")
    defaults = job.manifest.defaults.model_dump(mode="json", exclude_defaults=True, include=set(kept)) if job.manifest else {}
    text = yaml.safe_dump({"version": 1, **({"defaults": defaults} if defaults else {}), "tests": tests}, sort_keys=False)
    result.manifests[name] = text
    return loader.loads(text, str(job.config.out / name))


def _visual(page: str, out: Path, runs: str, preview: TestResult | None, baseline: TestResult | None) -> Seen | None:
    """The page looks different on the preview: the two final screenshots (of `runs`-preview and `runs`-baseline)
    compared as expect.visual compares them."""
    shots = [r.artifacts.get("final_screenshot") if r else None for r in (preview, baseline)]
    if not isinstance(shots[0], str) or not isinstance(shots[1], str):
        return None
    before = (out / f"{runs}-baseline" / shots[1]).read_bytes()
    after = (out / f"{runs}-preview" / shots[0]).read_bytes()
    ratio = compare(before, after).diff_ratio
    if ratio <= VISUAL_MAX_DIFF:
        return None
    summary = f"the page looks different: {ratio:.1%} of its pixels differ from the baseline's"
    return Seen(FindingKind.VISUAL, page, summary, f"visual {page}", {"screenshot": f"{runs}-preview/{shots[0]}"})


def _confirmed(new: list[Seen], job: Exploration, result: ExploreResult, env: Mapping[str, str]) -> list[Finding]:
    """Each new finding's repro, run on both sides: a finding counts only if its repro fails on the preview for its
    check and passes on the baseline; a visual change, if the repro's screenshots differ again."""
    if not new:
        return []
    # a visual change's repro (expect.visual) needs a baseline run to compare with: here its page is shot once more
    tests = {s.kind.value + s.page: _run_as(repro(s.kind, s.page)) for s in new}
    on = _on_both(result, job, "repro", list(tests.values()), env)
    found = []
    for seen in new:
        name = tests[seen.kind.value + seen.page]["name"]
        if seen.kind is FindingKind.VISUAL:
            again = _visual(seen.page, job.config.out, "repro", on["preview"].get(name), on["baseline"].get(name))
            ok = again is not None
            why = (
                "its page, shot once more on both sides, differs again"
                if ok
                else "shot once more on both sides, its page no longer differed: a difference that comes and goes"
            )
        else:
            ok, why = confirmation(seen.kind, on["preview"].get(name), on["baseline"].get(name))
        found.append(finding(seen, False, ok, why))
    return found


def _run_as(test: dict[str, Any]) -> dict[str, Any]:
    """The repro as it runs here: a visual one without its expect.visual (its screenshots are compared above)."""
    return {k: v for k, v in test.items() if k != "expect"} if "visual" in test["expect"] else test
