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

from preview_qa import app, providers
from preview_qa.config import RunConfig
from preview_qa.errors import LLMConfigError, SelectionError, UnpricedBudgetError
from preview_qa.explore.charters import CHARTER, charter, reported
from preview_qa.explore.pages import discover
from preview_qa.manifest import loader
from preview_qa.manifest.models import Manifest
from preview_qa.results import ExploreResult, Finding, FindingKind, RunResult, Status, TestResult
from preview_qa.selection.routes import map_files
from preview_qa.verdict.checks.visual import compare
from preview_qa.verdict.findings import Seen, beside_old, compared, confirmation, finding, seen_on

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
    max_charters: int = 5  # the changed pages an agent uses as a user would
    max_cost_usd: float | None = None  # the whole exploration's: its charters and their repros
    use_state: str | None = None  # every page as the user the manifest's test of that save_state signs in


def explore(job: Exploration, env: Mapping[str, str]) -> ExploreResult:
    """Refuses, before any page is swept, a budget on a model of unknown price (it could not hold) and charters with
    no API key."""
    from preview_qa.engine.pricing import find_price, unpriced

    config = job.config
    if job.max_cost_usd is not None and job.max_charters:
        model = providers.default_model(config.provider, config.model)
        if find_price(config.provider, model, config.price_per_mtok) is None:
            raise UnpricedBudgetError(unpriced("--max-cost-usd", config.provider, model))
    _logins(job)  # a saved login no test of the manifest makes is refused before any page is swept
    started, clock = datetime.now(UTC).isoformat(timespec="seconds"), time.monotonic()
    out = config.out
    assert config.base_url is not None
    result = ExploreResult(base_url=config.base_url, baseline_url=job.baseline_url, started_at=started)
    changed, result.notes = _changed_pages(job)
    if changed and job.max_charters:  # their charters call the LLM: a missing key is said before any page is swept
        try:
            providers.resolve(config.provider, config.model, config.api_key, config.llm_base_url, env)
        except LLMConfigError as e:
            raise LLMConfigError(
                f"the changed pages' agent charters need the LLM: {e} (--max-charters 0: sweeps alone)"
            ) from None
    pages, found = asyncio.run(discover(config.base_url, config.preview_headers, job.max_pages, [*job.given, *changed]))
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
        old = seen_on(page, baseline, "sweep-baseline")
        for seen, there in compared(seen_on(page, preview, "sweep-preview"), old):
            if there:
                result.findings.append(finding(seen, True, False, "the baseline shows it too: not this PR's doing"))
            else:
                new.append(beside_old(seen, old))
        looks = _visual(page, out, "sweep", preview, baseline)
        new += [looks] if looks else []
    new += _charters(job, result, [p for p in changed if p in pages], quiet)
    result.findings += _confirmed(new, job, result, quiet)
    if job.use_state:  # each repro signs in as its run did: pasted beside the test that saves the login, it runs
        for f in result.findings:
            f.repro = _signed_in(f.repro, job.use_state)
    result.duration_s = round(time.monotonic() - clock, 2)
    return result


def _changed_pages(job: Exploration) -> tuple[list[str], list[str]]:
    """The changed files' routes (by the manifest's `routes:` and the frameworks' conventions, as `plan` maps them);
    a dynamic route ([slug]) is named, not guessed."""
    if job.changed is None:
        return [], []
    mapped = map_files(job.changed, job.manifest.routes if job.manifest else {}, None)
    static = [r.path for r in mapped.routes if "[" not in r.path]
    dynamic = [r.shown for r in mapped.routes if "[" in r.path]  # [slug], and [[lang]]'s page is the app's to say
    notes = list(mapped.notes)
    notes += [f"changed route {r} has a segment to fill ([...]): give one of its pages with --page" for r in dynamic]
    if not mapped.routes:
        notes.append("the changed files map to no route: the site is explored from its sitemap or /")
    return static, notes


def calls_llm(job: Exploration) -> bool:
    """Whether the exploration runs agent charters (changed pages, and --max-charters not 0): they need the LLM."""
    return bool(job.max_charters and _changed_pages(job)[0])


def _not_compared(run: TestResult | None, side: str) -> str | None:
    """Why a page's sweep on `side` cannot be compared: it errored (the deployment down, a crash) or never ran."""
    if run is None:
        return f"its sweep on the {side} did not run"
    return f"its sweep on the {side} errored: {run.reason}" if run.status is Status.ERRORED else None


def _sweep(page: str) -> dict[str, Any]:
    return {"name": SWEEP + page, "steps": [{"open": page}], "expect": SWEEP_CHECKS}


def _charters(job: Exploration, result: ExploreResult, changed: list[str], env: Mapping[str, str]) -> list[Seen]:
    """Each changed page's charter, run on the preview: what its agent reports, each with its repro; a
    report that cannot be confirmed (no check, no valid test) is listed unconfirmed at once, and a charter that gave
    nothing to go on leaves its page not compared (not knowing is no pass)."""
    wanted = list(dict.fromkeys(changed))
    pages = wanted[: job.max_charters]
    if left := len(wanted) - len(pages):
        result.notes.append(f"{left} changed page(s) had no agent charter (--max-charters {job.max_charters})")
    if not pages:
        return []
    on = _on_side(result, job, "charter", "preview", _manifest(job, [charter(p) for p in pages], result, "charters.yml"), env)
    new = []
    for page in pages:
        run = on.get(CHARTER + page)
        said = reported(page, run, "charter-preview")
        if isinstance(said, str):
            result.uncompared[page] = "; ".join([*filter(None, [result.uncompared.get(page)]), said])
            continue
        result.charters[page] = f"{len(said)} finding(s) reported in {run.steps if run else 0} agent step(s)"
        for seen, unfit in said:
            if unfit is None:
                new.append(seen)
            else:
                result.findings.append(finding(seen, False, False, unfit))
    return new


def _on_both(
    result: ExploreResult, job: Exploration, kind: str, tests: list[dict[str, Any]], env: Mapping[str, str]
) -> dict[str, dict[str, TestResult]]:
    """The tests run on each side (`kind`-preview, `kind`-baseline), each side's results by test name; the manifest
    they ran is kept for the reporter to write beside them (`kind`s.yml: `preview-qa run` runs it as it stands)."""
    manifest = _manifest(job, tests, result, f"{kind}s.yml")
    return {side: _on_side(result, job, kind, side, manifest, env) for side in SIDES}


def _on_side(
    result: ExploreResult, job: Exploration, kind: str, side: str, manifest: Manifest, env: Mapping[str, str]
) -> dict[str, TestResult]:
    """The manifest run on one side (`kind`-`side`), its results by test name, within what is left of the budget."""
    out = job.config.out / f"{kind}-{side}"
    spent = result.usage.cost_usd or 0.0
    # one plain run a side: no comment, cache, baseline run or retry of its own
    config = dataclasses.replace(
        job.config,
        manifest=Path(manifest.path),
        base_url=job.config.base_url if side == "preview" else job.baseline_url,
        out=out,
        comment=False,
        cache=None,
        baseline_url=None,
        retries=0,
        run_max_cost_usd=None if job.max_cost_usd is None else max(job.max_cost_usd - spent, 1e-9),
    )
    app.execute(manifest, config, env)
    result.runs.append(out.name)
    # as written: the artifacts' paths are the reporters' (the run's own result holds the bytes' events, not them)
    run = RunResult.model_validate_json((out / "results.json").read_text(encoding="utf-8"))
    result.usage += run.usage  # every test's, a login's (--use-state) too
    return {t.name: t for t in run.tests}


def _manifest(job: Exploration, tests: list[dict[str, Any]], result: ExploreResult, name: str) -> Manifest:
    """The tests as a manifest, with the user's defaults that say how to reach and read the app (not its checks, tasks
    or saved logins) and, with --use-state, the user's tests that sign in, each test starting from that login."""
    kept = ("allowed_domains", "secrets", "device", "viewport", "locale", "timezone", "color_scheme", "dialogs", "timeout")
    defaults = job.manifest.defaults.model_dump(mode="json", exclude_defaults=True, include=set(kept)) if job.manifest else {}
    if job.use_state:
        tests = [*_logins(job), *(_signed_in(t, job.use_state) for t in tests)]
    text = yaml.safe_dump({"version": 1, **({"defaults": defaults} if defaults else {}), "tests": tests}, sort_keys=False)
    result.manifests[name] = text
    return loader.loads(text, str(job.config.out / name))


def _logins(job: Exploration) -> list[dict[str, Any]]:
    """The manifest's tests that make the saved login (--use-state: the test whose save_state it is, and those it starts
    from in turn), as written, first to run."""
    chain: list[dict[str, Any]] = []
    name = job.use_state
    while name is not None:
        maker = next((t for t in job.manifest.tests if t.save_state == name), None) if job.manifest else None
        if maker is None or len(chain) > len(job.manifest.tests if job.manifest else []):
            raise SelectionError(f"--use-state {job.use_state}: no test of the --manifest saves it (save_state: {name})")
        chain.insert(0, job.manifest.as_written(maker) if job.manifest else {})
        name = maker.use_state
    return chain


def _signed_in(test: dict[str, Any], state: str) -> dict[str, Any]:
    return {"name": test["name"], "use_state": state, **{k: v for k, v in test.items() if k != "name"}}


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
    tests = {s.repro["name"]: _run_as(s.repro) for s in new}
    on = _on_both(result, job, "repro", list(tests.values()), env)
    found = []
    for seen in new:
        name = seen.repro["name"]
        if seen.kind is FindingKind.VISUAL:
            again = _visual(seen.page, job.config.out, "repro", on["preview"].get(name), on["baseline"].get(name))
            ok = again is not None
            why = (
                "its page, shot once more on both sides, differs again"
                if ok
                else "shot once more on both sides, its page no longer differed: a difference that comes and goes"
            )
        else:
            ok, why = confirmation(seen, on["preview"].get(name), on["baseline"].get(name))
        # never on_baseline: a claim whose repro fails on both sides may be a bug main has, or no bug at all
        found.append(finding(seen, False, ok, why))
    return found


def _run_as(test: dict[str, Any]) -> dict[str, Any]:
    """The repro as it runs here: a visual one without its expect.visual (its screenshots are compared above)."""
    return {k: v for k, v in test.items() if k != "expect"} if "visual" in test["expect"] else test
