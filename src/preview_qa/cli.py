"""The `preview-qa` command: flags -> RunConfig, reporters, exit codes. No test logic lives here."""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from preview_qa import manifest as manifest_mod
from preview_qa.config import DEFAULT_CACHE, DEFAULT_OUT, RunConfig, default_concurrency
from preview_qa.lifecycle import exit_with, run_bounded
from preview_qa.redact import Redactor
from preview_qa.results import RunResult, Status

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_CANCELLED = 0, 1, 2, 130
QUIET_LOGGERS = ("browser_use", "cdp_use", "bubus", "httpx", "openai", "anthropic", "google_genai", "preview_qa.lifecycle")


class UsageError(click.ClickException):
    exit_code = EXIT_USAGE

    def show(self, file: Any = None) -> None:
        click.echo(f"preview-qa: error: {self.message}", err=True)


class _LinesType(click.types.StringParamType):
    """A repeatable option whose environment variable holds one value per line (the action's multi-line inputs)."""

    envvar_list_splitter = "\n"


_LINES = _LinesType()


def _env(*names: str) -> list[str]:
    """Environment variables an option falls back to: the action's INPUT_* (hyphens kept) and our own."""
    return list(names)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="preview-qa")
def main() -> None:
    """Test a preview deployment with AI browser agents and get a verdict you can trust."""


@main.command()
@click.argument("manifest", type=click.Path(dir_okay=False, path_type=Path), default="qa.yml", envvar="INPUT_MANIFEST")
@click.option("--secret-env", is_flag=True,
              help="Print only the environment variables the tests' secrets are read from, one per line.")
def validate(manifest: Path, secret_env: bool) -> None:
    """Check a manifest without running anything."""
    spec = _load(manifest)
    if secret_env:  # the action forwards exactly these variables into its container
        click.echo("\n".join(dict.fromkeys(env for test in spec.tests for env in test.secrets.values())))
        return
    click.echo(f"{manifest}: {len(spec.tests)} test(s), valid.")


def run_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """The options `run` shares with the bundled demo."""
    options = [
        click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=DEFAULT_OUT,
                     envvar=_env("INPUT_OUT"), show_default=True, help="Folder for results, reports and artifacts."),
        click.option("--concurrency", type=click.IntRange(1, 64), default=default_concurrency(),
                     envvar=_env("INPUT_CONCURRENCY"), show_default=True, help="Tests run at once."),
        click.option("--only", multiple=True, help="Run only the test with this name (repeatable)."),
        click.option("--headful", is_flag=True, help="Show the browser windows."),
        click.option("-v", "--verbose", is_flag=True, help="Show browser-use's own log on stderr (secrets redacted)."),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def speed_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """The replay cache, budgets and sharding: passed to the command as keyword arguments, see `_speed_config`."""
    options = [
        click.option("--cache", type=click.Path(file_okay=False, path_type=Path), default=DEFAULT_CACHE,
                     envvar=_env("INPUT_CACHE", "PREVIEW_QA_CACHE"), show_default=True,
                     help="Folder of recorded traces: a test that passed is replayed without agent LLM calls next time."),
        click.option("--no-cache", is_flag=True, envvar=_env("PREVIEW_QA_NO_CACHE"),
                     help="Always run the agent; neither read nor write the cache."),
        click.option("--max-tokens", type=click.IntRange(1), envvar=_env("INPUT_MAX-TOKENS"),
                     help="Per test: stop it as errored past this many LLM tokens (overrides the manifest)."),
        click.option("--max-cost-usd", type=click.FloatRange(0, min_open=True), envvar=_env("INPUT_MAX-COST-USD"),
                     help="Per test: stop it as errored past this LLM cost in USD (overrides the manifest)."),
        click.option("--run-max-tokens", type=click.IntRange(1), envvar=_env("INPUT_RUN-MAX-TOKENS"),
                     help="Whole run: start no further test once the finished ones used this many tokens."),
        click.option("--run-max-cost-usd", type=click.FloatRange(0, min_open=True), envvar=_env("INPUT_RUN-MAX-COST-USD"),
                     help="Whole run: start no further test once the finished ones cost this much (USD)."),
        click.option("--shard", metavar="I/N", envvar=_env("INPUT_SHARD"),
                     help="Run only shard I of N (a stable, balanced share); combine the shards with `merge`."),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def _speed_config(cache: Path, no_cache: bool, max_tokens: int | None, max_cost_usd: float | None,
                  run_max_tokens: int | None, run_max_cost_usd: float | None, shard: str | None) -> dict[str, Any]:
    from preview_qa.shard import parse_shard

    try:
        parsed = parse_shard(shard) if shard else None
    except ValueError as e:
        raise UsageError(str(e)) from None
    return {"cache": None if no_cache else cache, "max_tokens": max_tokens, "max_cost_usd": max_cost_usd,
            "run_max_tokens": run_max_tokens, "run_max_cost_usd": run_max_cost_usd, "shard": parsed}


@main.command()
@click.argument("manifest", type=click.Path(dir_okay=False, path_type=Path), default="qa.yml", envvar="INPUT_MANIFEST")
@click.option("--base-url", required=True, envvar=_env("INPUT_BASE-URL", "PREVIEW_QA_BASE_URL"),
              help="The preview deployment to test, e.g. https://pr-42.preview.example.com")
@click.option("--provider", default="openai", envvar=_env("INPUT_PROVIDER", "PREVIEW_QA_PROVIDER"), show_default=True,
              type=click.Choice(["openai", "anthropic", "google", "azure", "ollama", "browser-use"]))
@click.option("--model", envvar=_env("INPUT_MODEL", "PREVIEW_QA_MODEL"), help="Model name (provider default if unset).")
@click.option("--api-key", envvar=_env("INPUT_API-KEY"), help="API key (else the provider's usual variable).")
@click.option("--llm-base-url", envvar=_env("INPUT_LLM-BASE-URL"), help="Any OpenAI-compatible endpoint.")
@click.option("--wait-timeout", type=click.FloatRange(0), default=0, envvar=_env("INPUT_WAIT-TIMEOUT"),
              help="Seconds to wait for the preview to answer before the first test.")
@click.option("--extra-header", "extra_headers", multiple=True, metavar="'NAME: VALUE'", type=_LINES,
              envvar=_env("INPUT_EXTRA-HEADERS"),
              help="HTTP header sent with the browser's requests (repeatable), e.g. a protection-bypass token.")
@click.option("--fail-on", type=click.Choice(["failed", "errored", "never"]), default="failed", show_default=True,
              envvar=_env("INPUT_FAIL-ON"), help="Exit 1 when a test failed or errored | only when one errored | never.")
@click.option("--comment/--no-comment", default=True, envvar=_env("INPUT_COMMENT"), show_default=True,
              help="In a GitHub Actions pull request run: post or update one PR comment with the results.")
@run_options
@speed_options
def run(manifest: Path, base_url: str, provider: str, model: str | None, api_key: str | None,
        llm_base_url: str | None, wait_timeout: float, extra_headers: tuple[str, ...], fail_on: str, comment: bool,
        out: Path, concurrency: int, only: tuple[str, ...], headful: bool, verbose: bool, **speed: Any) -> None:
    """Run a manifest's tests against a preview URL."""
    spec = _load(manifest)
    config = RunConfig(manifest=manifest, base_url=_base_url(base_url), out=out, provider=provider, model=model,
                       api_key=api_key, llm_base_url=llm_base_url, concurrency=concurrency, headless=not headful,
                       extra_headers=_headers(extra_headers), wait_timeout=wait_timeout, only=list(only),
                       fail_on=fail_on, comment=comment,
                       **_speed_config(**speed))
    exit_with(lambda: execute(spec, config, verbose))


@main.command()
@run_options
def demo(out: Path, concurrency: int, only: tuple[str, ...], headful: bool, verbose: bool) -> None:
    """Run the bundled demo: a demo site and a scripted agent, no API key needed."""
    from preview_qa.demo.runner import run_demo

    out = Path("demo-results") if out == Path(DEFAULT_OUT) else out
    exit_with(lambda: run_demo(out, concurrency, list(only), not headful, verbose))


@main.command()
@click.argument("folders", nargs=-1, required=True, type=click.Path(file_okay=False, exists=True, path_type=Path))
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=DEFAULT_OUT, envvar=_env("INPUT_OUT"),
              show_default=True, help="Folder for the merged results, reports and artifacts.")
@click.option("--fail-on", type=click.Choice(["failed", "errored", "never"]), default="failed", show_default=True,
              envvar=_env("INPUT_FAIL-ON"), help="Exit 1 when a test failed or errored | only when one errored | never.")
@click.option("--comment/--no-comment", default=True, envvar=_env("INPUT_COMMENT"), show_default=True,
              help="In a GitHub Actions pull request run: post or update one PR comment with the merged results.")
def merge(folders: tuple[Path, ...], out: Path, fail_on: str, comment: bool) -> None:
    """Merge the results folders of several shards (`run --shard I/N`) into one, with one report and exit code."""
    from preview_qa.merge import MergeError, copy_artifacts, load_run, merge_runs, replay
    from preview_qa.reporters import Dispatcher

    try:
        result = merge_runs([load_run(folder) for folder in folders])
    except MergeError as e:
        raise UsageError(str(e)) from None
    copy_artifacts(list(folders), out)
    github = _github_reporter(out, comment, [])
    try:
        replay(result, Dispatcher([*output_reporters(out), *([github] if github else [])]))
    finally:
        if github is not None:
            github.finish()
    sys.exit(exit_code(result, fail_on))


def _github_reporter(out: Path, comment: bool, secret_values: list[str | None]) -> Any:
    """Inside GitHub Actions, the GitHub reporter, started: it masks first, then nothing the run prints issues commands."""
    from preview_qa.reporters.github import GitHubReporter, in_github_actions

    if not in_github_actions(os.environ):
        return None
    github = GitHubReporter(os.environ, out, comment)
    github.start([*secret_values, os.environ.get("INPUT_GITHUB-TOKEN")])
    return github


def execute(spec: manifest_mod.Manifest, config: RunConfig, verbose: bool) -> int:
    """Resolve secrets and the LLM, run with every reporter, and turn the outcome into an exit code."""
    from preview_qa.agent.llm import LLMConfigError, make_llm
    from preview_qa.cache import CacheReporter, TraceCache
    from preview_qa.reporters import Dispatcher
    from preview_qa.runner import run_manifest

    try:
        secrets = manifest_mod.resolve_secrets(spec, os.environ)
        make_llm(config.provider, config.model, config.api_key, config.llm_base_url)
    except (manifest_mod.ManifestError, LLMConfigError) as e:
        raise UsageError(str(e)) from None
    unknown = sorted(set(config.only) - {t.name for t in spec.tests})
    if unknown:
        raise UsageError(f"--only names no test called {unknown[0]!r}; check the names in {config.manifest}.")
    if config.chromium is None:
        raise UsageError("no Chromium found; install it (apt-get install chromium) or set PREVIEW_QA_CHROMIUM.")
    github = _github_reporter(config.out, config.comment, [config.api_key, *config.extra_headers.values(),
                                                          *(v for values in secrets.values() for v in values.values())])
    _quiet_logs(verbose, Redactor.of_tests(secrets))
    cache = TraceCache(config.cache, spec, config.provider, config.model) if config.cache else None
    dispatch = Dispatcher([*output_reporters(config.out), *([CacheReporter(cache, spec, config.base_url)] if cache else [])])
    if github is not None:
        dispatch.reporters.append(github)

    def llm_factory() -> Any:
        return make_llm(config.provider, config.model, config.api_key, config.llm_base_url)

    try:
        result = run_bounded(run_manifest(spec, config, secrets, llm_factory, dispatch, cache.load if cache else None))
    finally:
        if github is not None:
            github.finish()
    return exit_code(result, config.fail_on)


def output_reporters(out: Path) -> list[Any]:
    """Every reporter that turns a run into files and console output: for `run`, and again for `merge`."""
    from preview_qa.reporters.artifacts import ArtifactsReporter
    from preview_qa.reporters.console import ConsoleReporter
    from preview_qa.reporters.html import HtmlReporter
    from preview_qa.reporters.junit import JUnitReporter

    return [ArtifactsReporter(out), JUnitReporter(out), HtmlReporter(out), ConsoleReporter(out_dir=str(out))]


def exit_code(result: RunResult, fail_on: str = "failed") -> int:
    """130 when cancelled; else 1 once the run's worst test is at least as bad as `fail_on` (never: always 0)."""
    if result.notice == "cancelled":
        return EXIT_CANCELLED
    if fail_on == "never":
        return EXIT_OK
    return EXIT_FAILED if result.status.rank >= Status(fail_on).rank else EXIT_OK


def _load(path: Path) -> manifest_mod.Manifest:
    try:
        return manifest_mod.load(path)
    except manifest_mod.ManifestError as e:
        raise UsageError(str(e)) from None


def _base_url(url: str) -> str:
    if not url.startswith(("http://", "https://")):
        raise UsageError(f"--base-url must start with http:// or https:// (got {url!r}).")
    return url.rstrip("/")


def _headers(values: tuple[str, ...]) -> dict[str, str]:
    headers = {}
    for value in values:
        if not value.strip():  # blank lines of a multi-line INPUT_EXTRA-HEADERS
            continue
        name, sep, content = value.partition(":")
        if not sep or not name.strip():
            raise UsageError(f"--extra-header must look like 'Name: value' (got {value!r}).")
        headers[name.strip()] = content.strip()
    return headers


class _RedactingFilter(logging.Filter):
    def __init__(self, redactor: Redactor):
        super().__init__()
        self.redactor = redactor

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg, record.args = self.redactor.text(record.getMessage()), None
        return True


def _quiet_logs(verbose: bool, redactor: Redactor) -> None:
    for name in QUIET_LOGGERS:
        logger = logging.getLogger(name)
        logger.propagate = False
        logger.handlers.clear()
        if verbose:
            handler = logging.StreamHandler(sys.stderr)
            handler.addFilter(_RedactingFilter(redactor))
            logger.addHandler(handler)
            logger.setLevel(logging.INFO)
        else:
            logger.setLevel(logging.CRITICAL + 1)
