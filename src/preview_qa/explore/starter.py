"""`explore --write` (#68, 6): a starter suite from the preview alone. Each page explored is drafted for as `plan`
drafts a changed route (planning/planner.py: the page read, drafts asked of the LLM, each tried on the preview and
proven), and only the drafts that passed and are not vacuous are kept, as a manifest."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from urllib.parse import urlsplit

from preview_qa import app, providers
from preview_qa.explore.explorer import Exploration
from preview_qa.manifest.models import Manifest
from preview_qa.planning.planner import Planner, PlanOptions
from preview_qa.results import PlanSummary


def check(job: Exploration, env: Mapping[str, str]) -> None:
    """Drafting needs the LLM: no key, or a budget on a model of unknown price, is refused (exit 2) before any page is
    swept."""
    config = job.config
    providers.resolve(config.provider, config.model, config.api_key, config.llm_base_url, env, key_needed=True)
    if job.max_cost_usd is not None:
        Planner(Manifest.model_construct(version=1, tests=[]), config, _options([], job.max_cost_usd))


def draft(job: Exploration, pages: list[str], env: Mapping[str, str], spent: float | None = None) -> PlanSummary:
    """Drafts for each page (its path: one query of it was explored), tried on the preview and proven, within what
    the exploration (`spent`) left of --max-cost-usd. The user's manifest (--manifest) lends its defaults, its saved
    login and its tests: a page a test covers is not drafted for."""
    manifest = job.manifest or Manifest.model_construct(version=1, tests=[])  # no test yet: every page is drafted for
    config = dataclasses.replace(job.config, prove=True)
    routes = list(dict.fromkeys(urlsplit(page).path or "/" for page in pages))
    left = None if job.max_cost_usd is None else max(job.max_cost_usd - (spent or 0.0), 1e-9)
    return app.plan_only(manifest, config, env, Planner(manifest, config, _options(routes, left)))


def _options(routes: list[str], budget: float | None) -> PlanOptions:
    return PlanOptions(
        routes=routes,
        max_cost_usd=budget,
        budget_flag="--max-cost-usd",
        drafted_by="preview-qa explore --write",
        given="a page explore swept",
    )
