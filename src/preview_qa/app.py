"""The composition root: reporters, runner, replay cache, logging and cancellation, wired from a RunConfig and an
explicit environment. It raises plain domain errors and returns the run's result; the CLI and the demo both call it.
What only a run needs is imported when it starts, so that `preview-qa validate` and `--help` stay quick."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import sys
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from preview_qa import providers
from preview_qa.config import RunConfig, TraceMode
from preview_qa.events import Event, ExploreFinished, PlanFinished
from preview_qa.lifecycle import own_temp_folder, run_bounded
from preview_qa.manifest import loader
from preview_qa.manifest.models import Manifest
from preview_qa.reporters import Dispatcher, Reporter
from preview_qa.results import ExploreResult, PlanSummary, RunResult, StopReason, Usage
from preview_qa.secrets.redact import Redactor
from preview_qa.selection.select import select

if TYPE_CHECKING:
    from preview_qa.agent.browsers.launch import BrowserSetup
    from preview_qa.engine.runner import Recordings
    from preview_qa.engine.visual import References

LIBRARY_LOGGERS = ("browser_use", "cdp_use", "bubus", "httpx", "openai", "anthropic", "google_genai")
QUIET_LOGGERS = (*LIBRARY_LOGGERS, "preview_qa.lifecycle")


@dataclass(frozen=True)
class Prepared:
    """What a run gathered before any browser starts, handed to planning (issue #39) as to the runner."""

    secrets: dict[str, dict[str, str]]
    llm: providers.LLMSettings
    redactor: Redactor
    env: Mapping[str, str]


Planner = Callable[[Prepared], PlanSummary]  # planning/, given by the CLI: the app never imports it (it sits above)
Explorer = Callable[[Prepared, Usage], ExploreResult]  # explore/, given by the CLI as planning is; the tests' usage


def execute(
    manifest: Manifest,
    config: RunConfig,
    env: Mapping[str, str],
    verbose: bool = False,
    plan: Planner | None = None,
    explore: Explorer | None = None,
) -> RunResult:
    """Resolve secrets and the LLM from `env`, run every test with every reporter, and return the run's result. The
    run leaves nothing in the temp folder: everything it (and the libraries it loads) puts there goes when it ends.
    With `plan` (`run --plan`), planning follows the tests, and with `explore` (`run --explore`) the exploration
    follows them, before the reporters finish (the PR comment shows both)."""
    with own_temp_folder():
        return _execute(manifest, config, env, verbose, plan, explore)


def plan_only(manifest: Manifest, config: RunConfig, env: Mapping[str, str], plan: Planner, verbose: bool = False) -> PlanSummary:
    """`preview-qa plan`: the run's preparation (secrets, LLM, the one redactor, the safe stderr), then planning alone."""
    with own_temp_folder():
        prepared = _prepare(manifest, config, env, llm_needed=True)
        _quiet_logs(verbose)
        return plan(prepared)


def _prepare(
    manifest: Manifest,
    config: RunConfig,
    env: Mapping[str, str],
    running: Collection[str] | None = None,
    llm_needed: bool | None = None,
) -> Prepared:
    from preview_qa.secrets.safe_stderr import install_safe_stderr

    # before any reporter starts: what is missing is the user's to fix, not a run to report; `running`: the tests whose
    # secrets must be there (None: every test's)
    llm_given = (config.provider, config.model, config.api_key, config.llm_base_url)
    secrets, llm, chromium = preflight(
        manifest, env, *llm_given, config.chromium, running, llm_needed, local=config.cdp_url is None
    )  # the Chromium found once, before any browser starts: the tests' and planning's browsers are this one
    config.chromium = chromium or None
    llm = priced(llm, manifest, config)
    # Every secret of the run, gathered here only and handed down (stderr, reporters, runner, agents, LLM wrapper): the
    # key the provider really gets (maybe from its usual variable, not --api-key), the headers' values, the GitHub token
    redactor = Redactor.of_tests(secrets, llm.api_key, config.extra_headers, config.basic_auth_password, _github_token(env))
    install_safe_stderr(redactor)  # before anything can print page or LLM text there (our logs, browser-use's, tracebacks)
    return Prepared(secrets, llm, redactor, env)


def _execute(
    manifest: Manifest, config: RunConfig, env: Mapping[str, str], verbose: bool, plan: Planner | None, explore: Explorer | None
) -> RunResult:
    from preview_qa.engine.proof import ProofCacheReporter
    from preview_qa.engine.replay_cache import CacheReporter, RecordingCache
    from preview_qa.secrets.safe_stderr import install_safe_stderr

    # the runner selects again; a filter that names nothing must stop the run before it starts, and only the tests the
    # run runs (and the setup tests they start from) need their secrets
    selection = select(manifest, config)
    prepared = _prepare(manifest, config, env, {spec.name for spec in selection.runs}, True if plan is not None else None)
    secrets, llm, redactor = prepared.secrets, prepared.llm, prepared.redactor
    cache = RecordingCache(config.cache, manifest, config.provider, config.model) if config.cache else None
    keep = config.keep_fall_back_recordings  # off in a pull request's run (config.fall_back_recordings_kept)
    reporters = [
        *github_reporters(env, config.out, config.comment, redactor),
        *output_reporters(config.out, config.trace),
        *([CacheReporter(cache, manifest, config, keep)] if cache else []),
        *([ProofCacheReporter(config.cache)] if config.cache and config.prove else []),  # --prove's proofs
    ]

    def llm_factory() -> Any:  # called by the first test that needs the LLM: a run of replays never loads its client
        from preview_qa.agent.adapter.llm import make_llm

        return make_llm(llm)

    def run(publish: Callable[[Event], None]) -> RunResult:
        _quiet_logs(verbose)
        recordings, references = (cache.lookup, cache.reference) if cache else (None, None)
        result = run_bounded(run_manifest(manifest, config, secrets, llm_factory, publish, redactor, recordings, references))
        if plan is not None:  # before the reporters finish: the PR comment shows it
            result.plan = plan(prepared)
            publish(PlanFinished(plan=result.plan))
        if explore is not None and result.stop_reason is not StopReason.CANCELLED:  # a signal stops the whole job
            result.explore = explore(prepared, result.usage)  # what the tests spent of --run-max-cost-usd
            # its own runs (each an app.execute with its own reporters) installed their redactor: this run's again
            install_safe_stderr(redactor)
            publish(ExploreFinished(explore=result.explore))
        return result

    return with_reporters(reporters, run)


def preflight(
    manifest: Manifest,
    env: Mapping[str, str],
    provider: str,
    model: str | None,
    api_key: str | None,
    llm_base_url: str | None,
    chromium: str | None,
    running: Collection[str] | None = None,
    llm_needed: bool | None = None,
    local: bool = True,
) -> tuple[dict[str, dict[str, str]], providers.LLMSettings, str]:
    """What `run` refuses before it starts a browser, checked for `validate` too: a secret's variable unset for a test
    in `running` (None: any test; ManifestError at its key), no API key for the provider (LLMConfigError) when the LLM
    is needed (None: when a test in `running` may call it; a manifest of exact steps needs no key), no Chromium
    (SetupError); and the Chromium found (`chromium`, the flag's, else looked for: agent/browsers/chromium.py; none
    when the browser is not `local`, "")."""
    secrets = loader.resolve_secrets(manifest, env, running)
    needed = calls_llm(manifest, running) if llm_needed is None else llm_needed
    llm = providers.resolve(provider, model, api_key, llm_base_url, env, key_needed=needed)
    return secrets, llm, _chromium(chromium, env) if local else ""


def calls_llm(manifest: Manifest, running: Collection[str] | None = None) -> bool:
    """Whether a test in `running` (None: any test) may call the LLM: a manifest of exact steps never does."""
    return any(spec.calls_llm for spec in manifest.tests if running is None or spec.name in running)


def priced(llm: providers.LLMSettings, manifest: Manifest, config: RunConfig) -> providers.LLMSettings:
    """The settings with the user's price and output limit (--max-output-tokens); a cost budget on a model of unknown
    price is refused (it cannot hold), unless none of the tests the run runs can call the LLM (exact steps only): a
    budget that nothing can spend holds."""
    from preview_qa.engine.pricing import find_price, unpriced
    from preview_qa.errors import UnpricedBudgetError
    from preview_qa.selection.select import select

    budgets = (("--max-cost-usd", config.max_cost_usd), ("--run-max-cost-usd", config.run_max_cost_usd))
    flags = [flag for flag, value in budgets if value is not None]
    budgeted = flags or any(test.max_cost_usd is not None for test in manifest.tests)
    spending = {test.name for test in select(manifest, config).spending} if budgeted else set()
    # The price data (about 0.04 s to load) is read here only for a budget that needs it; a call's cost reads it later
    if spending and find_price(llm.provider, llm.model, config.price_per_mtok) is None:
        if flags:
            raise UnpricedBudgetError(unpriced(" and ".join(flags), llm.provider, llm.model))
        for i, test in enumerate(manifest.tests):
            if test.max_cost_usd is not None and test.name in spending:
                raise manifest.error(
                    ("tests", i, "max_cost_usd"), unpriced(f"max_cost_usd of test '{test.name}'", llm.provider, llm.model)
                )
    return dataclasses.replace(llm, price_per_mtok=config.price_per_mtok, max_output_tokens=config.max_output_tokens)


def tool_redactor(manifest: Manifest | None, env: Mapping[str, str]) -> Redactor:
    """What the MCP server (mcp/) redacts its results and its stderr with, whatever manifest a call names: the secrets
    its environment holds for the manifest's tests (one not set is left out: there is nothing of it to leak), every
    provider's API key it holds, the preview's header values and basic-auth password as `run` reads them from the
    environment (INPUT_EXTRA-HEADERS, PREVIEW_QA_HTTP_CREDENTIALS), and the GitHub token."""
    secrets = loader.resolve_secrets(manifest, env, required=()) if manifest is not None else {}
    keys = [env[name] for names in providers.API_KEY_ENV.values() for name in names if env.get(name)]
    headers = {
        name.strip(): value.strip()
        for name, sep, value in (line.partition(":") for line in env.get("INPUT_EXTRA-HEADERS", "").splitlines())
        if sep and value.strip()
    }
    credentials = env.get("INPUT_HTTP-CREDENTIALS") or env.get("PREVIEW_QA_HTTP_CREDENTIALS") or ""
    password = credentials.partition(":")[2] or None
    redactor = Redactor.of_tests(secrets, keys[0] if keys else None, headers, password, _github_token(env))
    redactor.add({f"api-key-{n}": key for n, key in enumerate(keys[1:], start=2)})  # a second provider's key
    return redactor


def merge(folders: list[Path], out: Path, comment: bool, env: Mapping[str, str]) -> RunResult:
    """Several shards' results folders as one run: its artifacts copied into `out`, rendered by every reporter."""
    from preview_qa.reporters.output import merge as merging

    shards = [(folder, merging.load_run(folder)) for folder in folders]
    result = merging.merge_runs([run for _, run in shards])
    merging.copy_artifacts(shards, result, out)

    def publish_all(publish: Callable[[Event], None]) -> RunResult:
        merging.announce(result, publish)
        return result

    redactor = Redactor.of_tests({}, github_token=_github_token(env))  # merged results were redacted by their runs
    return with_reporters([*github_reporters(env, out, comment, redactor), *output_reporters(out)], publish_all)


def with_reporters(reporters: list[Reporter], work: Callable[[Callable[[Event], None]], RunResult]) -> RunResult:
    """Start every reporter, let `work` publish to them, finish every one whatever happens; a broken one fails the run."""
    dispatch = Dispatcher(reporters)
    with dispatch:
        result = work(dispatch)
    if dispatch.broken:
        raise ReportersFailed(result, dispatch.broken)
    return result


class ReportersFailed(RuntimeError):
    """A reporter broke: its output is missing or incomplete, so the run must not look like a success."""

    def __init__(self, result: RunResult, broken: dict[str, str]):
        self.result, self.broken = result, broken
        name, error = next(iter(broken.items()))
        more = f" (and {len(broken) - 1} more reporter(s))" if len(broken) > 1 else ""
        super().__init__(f"reporter {name} failed, so its output is missing or incomplete: {error}{more}")


def github_reporters(env: Mapping[str, str], out: Path, comment: bool, redactor: Redactor) -> list[Reporter]:
    """Inside GitHub Actions, the GitHub reporter: it starts first, masks the secrets, then keeps the run's own output
    from issuing workflow commands until it finishes."""
    from preview_qa.reporters.github.commands import in_github_actions

    if not in_github_actions(env):
        return []
    from preview_qa.reporters.github.reporter import GitHubReporter  # its API client and Markdown: only in Actions

    return [GitHubReporter(env, out, redactor, comment)]


def _github_token(env: Mapping[str, str]) -> str | None:
    """The token the GitHub reporter's API calls use (reporters/github/api.py): a secret of the run like the others."""
    return env.get("INPUT_GITHUB-TOKEN") or env.get("GITHUB_TOKEN")


def output_reporters(out: Path, trace: TraceMode = TraceMode.RETAIN_ON_FAILURE) -> list[Reporter]:
    """Every reporter that turns a run into files and console output: for `run`, and again for `merge`.
    The artifacts reporter comes first: the others list the files it has written by the time the run ends."""
    from preview_qa.reporters.artifacts import ArtifactsReporter
    from preview_qa.reporters.console import ConsoleReporter
    from preview_qa.reporters.html import HtmlReporter
    from preview_qa.reporters.junit import JUnitReporter

    return [ArtifactsReporter(out, trace), JUnitReporter(out), HtmlReporter(out), ConsoleReporter(out_dir=str(out))]


async def run_manifest(
    manifest: Manifest,
    config: RunConfig,
    secrets: dict[str, dict[str, str]],
    make_llm: Callable[[], Any],
    publish: Callable[[Event], None],
    redactor: Redactor,
    recordings: Recordings | None = None,
    references: References | None = None,
) -> RunResult:
    """The whole job with real browsers: one Playwright driver, one Chromium per concurrent test and a fresh context
    per test; `redactor` knows every secret of the run (the tests' own, the API key, the headers' values, a saved
    login's cookies once read) for the LLM, the pixels, stderr and the reporters."""
    from preview_qa.agent.browser_agents import browser_agents
    from preview_qa.engine.runner import Runner

    browser = browser_setup(config)
    done: list[RunResult] = []
    try:
        async with browser_agents(browser, make_llm, redactor, config.vision_for(manifest.defaults.vision)) as agent:
            runner = Runner(manifest, config, secrets, agent, publish, redactor, recordings, browser.start_budget_s, references)
            if runner.selection.tests:  # its first browser starts while the runner checks that the preview answers
                agent.pool.warm()
            done.append(await runner.run())
    except asyncio.CancelledError:
        if not done:
            raise
        # Cancelled while the browsers were being shut down: every result is already out, and final.
    return done[0]


def browser_setup(config: RunConfig) -> BrowserSetup:
    """The run's browsers as the flags set them (the tests' and planning's alike)."""
    from preview_qa.agent.browsers.launch import BrowserSetup

    return BrowserSetup(
        chromium="" if config.cdp_url else _chromium(config.chromium, os.environ),  # found by a run's preflight, checked again
        headless=config.headless,
        extra_headers=config.preview_headers,
        browsers=config.concurrency,
        trace=config.trace is not TraceMode.OFF,
        start_timeout_s=config.browser_start_timeout,
        cdp_url=config.cdp_url,
    )


def _chromium(chromium: str | None, env: Mapping[str, str]) -> str:
    from preview_qa.agent.browsers.chromium import find_chromium

    return find_chromium(chromium, env)


def _quiet_logs(verbose: bool) -> None:
    """browser-use's log only with --verbose; on stderr, which redacts and defuses it (secrets/safe_stderr.py). A quiet
    library's logger is disabled too, not only raised in level: bubus sets its logger's level as it is imported, which
    happens after this, when the first test needs the agent (its handler errors after a browser crash then reached
    stderr, with their tracebacks, through logging's last resort). Our own logger's level is ours alone to set."""
    for name in QUIET_LOGGERS:
        logger = logging.getLogger(name)
        logger.propagate = False
        logger.disabled = not verbose and name in LIBRARY_LOGGERS
        logger.handlers.clear()
        if verbose:
            logger.addHandler(logging.StreamHandler(sys.stderr))
            logger.setLevel(logging.INFO)
        else:
            logger.setLevel(logging.CRITICAL + 1)
