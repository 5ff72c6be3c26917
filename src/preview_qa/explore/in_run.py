"""`run --explore`: the exploration as app.Explorer, after the tests, on the run's preview and its --baseline-url, with
the run's ways in (headers, credentials, Chromium, the LLM) and not its selection: the run's filters, shard and rules
pick its tests, never the pages explored."""

from __future__ import annotations

from collections.abc import Mapping

from preview_qa import providers
from preview_qa.app import Prepared
from preview_qa.config import RunConfig
from preview_qa.errors import LLMConfigError
from preview_qa.explore.explorer import Exploration, calls_llm, explore
from preview_qa.manifest.models import Manifest
from preview_qa.reporters.output.files import EXPLORE
from preview_qa.results import ExploreResult


class RunExploration:
    """app.Explorer: called with what the run prepared (its environment), returns the exploration's result."""

    def __init__(self, manifest: Manifest, config: RunConfig, env: Mapping[str, str]) -> None:
        """Refuses, before any test runs, charters (the changed pages') with no API key for the provider."""
        self.manifest, self.config = manifest, config
        if calls_llm(self.job()):
            try:
                providers.resolve(config.provider, config.model, config.api_key, config.llm_base_url, env)
            except LLMConfigError as e:
                raise LLMConfigError(f"--explore: the changed pages' agent charters need the LLM: {e}") from None

    def __call__(self, prepared: Prepared) -> ExploreResult:
        return explore(self.job(), prepared.env)

    def job(self) -> Exploration:
        """The exploration of the run's preview; its Chromium the one the run's preflight found (the flag's, else looked
        for), its changed files' routes first, as `explore --changed-files` takes them."""
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
        return Exploration(config, run.baseline_url, manifest=self.manifest, changed=run.changed_files)
