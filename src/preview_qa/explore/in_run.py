"""`run --explore`: the exploration as app.Explorer, after the tests, on the run's preview and its --baseline-url, with
the run's ways in (headers, credentials, Chromium, the LLM) and not its selection: the run's filters, shard and rules
pick its tests, never the pages explored."""

from __future__ import annotations

from collections.abc import Mapping

from preview_qa import providers
from preview_qa.app import Prepared
from preview_qa.config import RunConfig
from preview_qa.errors import LLMConfigError, UnpricedBudgetError
from preview_qa.explore.explorer import Exploration, calls_llm, explore
from preview_qa.manifest.models import Manifest
from preview_qa.reporters.output.files import EXPLORE
from preview_qa.results import ExploreResult, Usage


class RunExploration:
    """app.Explorer: called with what the run prepared (its environment), returns the exploration's result."""

    def __init__(self, manifest: Manifest, config: RunConfig, env: Mapping[str, str]) -> None:
        """Refuses, before any test runs, charters (the changed pages') with no API key for the provider, or under a
        --run-max-cost-usd on a model of unknown price (it could not hold)."""
        from preview_qa.engine.pricing import find_price, unpriced

        self.manifest, self.config = manifest, config
        if calls_llm(self.job()):
            try:
                providers.resolve(config.provider, config.model, config.api_key, config.llm_base_url, env)
            except LLMConfigError as e:
                raise LLMConfigError(f"--explore: the changed pages' agent charters need the LLM: {e}") from None
            model = providers.default_model(config.provider, config.model)
            if config.run_max_cost_usd is not None and find_price(config.provider, model, config.price_per_mtok) is None:
                raise UnpricedBudgetError(unpriced("--run-max-cost-usd (with --explore's charters)", config.provider, model))

    def __call__(self, prepared: Prepared, spent: Usage) -> ExploreResult:
        return explore(self.job(spent), prepared.env)

    def job(self, spent: Usage | None = None) -> Exploration:
        """The exploration of the run's preview; its Chromium the one the run's preflight found (the flag's, else looked
        for), its changed files' routes first, as `explore --changed-files` takes them; its charters and their repros
        within what the tests (`spent`) left of --run-max-cost-usd."""
        run = self.config
        assert run.base_url is not None and run.baseline_url is not None  # the CLI refuses --explore without them
        config = RunConfig(
            manifest=run.manifest,
            base_url=run.base_url,
            out=run.out / EXPLORE,
            provider=run.provider,
            model=run.model,
            api_key=run.api_key,
            llm_base_url=run.llm_base_url,
            concurrency=run.concurrency,
            chromium=run.chromium,
            headless=run.headless,
            extra_headers=run.extra_headers,
            http_credentials=run.http_credentials,
            trace=run.trace,
            vision=run.vision,
            browser_start_timeout=run.browser_start_timeout,
            llm_timeout=run.llm_timeout,
            max_output_tokens=run.max_output_tokens,
            price_per_mtok=run.price_per_mtok,
        )
        budget = run.run_max_cost_usd
        left = None if budget is None else max(budget - ((spent.cost_usd if spent else None) or 0.0), 1e-9)
        return Exploration(config, run.baseline_url, manifest=self.manifest, changed=run.changed_files, max_cost_usd=left)
