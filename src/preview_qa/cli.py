"""The `preview-qa` command: flags -> RunConfig, reporters, exit codes. No test logic lives here."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from preview_qa import manifest as manifest_mod
from preview_qa.config import DEFAULT_OUT, RunConfig, default_concurrency
from preview_qa.results import RunResult

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_CANCELLED = 0, 1, 2, 130
QUIET_LOGGERS = ("browser_use", "cdp_use", "bubus", "httpx", "openai", "anthropic", "google_genai")


class UsageError(click.ClickException):
    exit_code = EXIT_USAGE

    def show(self, file: Any = None) -> None:
        click.echo(f"preview-qa: error: {self.message}", err=True)


def _env(*names: str) -> list[str]:
    """Environment variables an option falls back to: the action's INPUT_* (hyphens kept) and our own."""
    return list(names)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="preview-qa")
def main() -> None:
    """Test a preview deployment with AI browser agents and get a verdict you can trust."""


@main.command()
@click.argument("manifest", type=click.Path(dir_okay=False, path_type=Path), default="qa.yml", envvar="INPUT_MANIFEST")
def validate(manifest: Path) -> None:
    """Check a manifest without running anything."""
    spec = _load(manifest)
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
@click.option("--extra-header", "extra_headers", multiple=True, metavar="'NAME: VALUE'",
              help="HTTP header sent with the browser's requests (repeatable), e.g. a protection-bypass token.")
@run_options
def run(manifest: Path, base_url: str, provider: str, model: str | None, api_key: str | None,
        llm_base_url: str | None, wait_timeout: float, extra_headers: tuple[str, ...], out: Path, concurrency: int,
        only: tuple[str, ...], headful: bool, verbose: bool) -> None:
    """Run a manifest's tests against a preview URL."""
    spec = _load(manifest)
    config = RunConfig(manifest=manifest, base_url=_base_url(base_url), out=out, provider=provider, model=model,
                       api_key=api_key, llm_base_url=llm_base_url, concurrency=concurrency, headless=not headful,
                       extra_headers=_headers(extra_headers), wait_timeout=wait_timeout, only=list(only))
    sys.exit(execute(spec, config, verbose))


@main.command()
@run_options
def demo(out: Path, concurrency: int, only: tuple[str, ...], headful: bool, verbose: bool) -> None:
    """Run the bundled demo: a demo site and a scripted agent, no API key needed."""
    from preview_qa.demo.runner import run_demo

    out = Path("demo-results") if out == Path(DEFAULT_OUT) else out
    sys.exit(run_demo(out, concurrency, list(only), not headful, verbose))


def execute(spec: manifest_mod.Manifest, config: RunConfig, verbose: bool) -> int:
    """Resolve secrets and the LLM, run with every reporter, and turn the outcome into an exit code."""
    from preview_qa.agent.llm import LLMConfigError, make_llm
    from preview_qa.reporters import Dispatcher
    from preview_qa.reporters.artifacts import ArtifactsReporter
    from preview_qa.reporters.console import ConsoleReporter
    from preview_qa.reporters.html import HtmlReporter
    from preview_qa.reporters.junit import JUnitReporter
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
    _quiet_logs(verbose, [v for values in secrets.values() for v in values.values()])
    dispatch = Dispatcher([ArtifactsReporter(config.out), JUnitReporter(config.out), HtmlReporter(config.out),
                           ConsoleReporter(out_dir=str(config.out))])

    def llm_factory() -> Any:
        return make_llm(config.provider, config.model, config.api_key, config.llm_base_url)

    result = _run_cancellable(run_manifest(spec, config, secrets, llm_factory, dispatch))
    return exit_code(result)


def exit_code(result: RunResult) -> int:
    if result.notice == "cancelled":
        return EXIT_CANCELLED
    return EXIT_OK if result.status.is_green else EXIT_FAILED


def _run_cancellable(coro: Any) -> RunResult:
    """Run until done; SIGTERM or SIGINT (how CI cancels a job) cancels the run, which still returns its results."""
    async def main_task() -> RunResult:
        task = asyncio.current_task()
        loop = asyncio.get_running_loop()
        assert task is not None
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, task.cancel)
        try:
            return await coro
        finally:
            for sig in (signal.SIGTERM, signal.SIGINT):
                loop.remove_signal_handler(sig)

    return asyncio.run(main_task())


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
        name, sep, content = value.partition(":")
        if not sep or not name.strip():
            raise UsageError(f"--extra-header must look like 'Name: value' (got {value!r}).")
        headers[name.strip()] = content.strip()
    return headers


class _RedactingFilter(logging.Filter):
    def __init__(self, secrets: list[str]):
        super().__init__()
        self.secrets = [s for s in secrets if s]

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        for secret in self.secrets:
            message = message.replace(secret, "<secret>")
        record.msg, record.args = message, None
        return True


def _quiet_logs(verbose: bool, secrets: list[str]) -> None:
    for name in QUIET_LOGGERS:
        logger = logging.getLogger(name)
        logger.propagate = False
        logger.handlers.clear()
        if verbose:
            handler = logging.StreamHandler(sys.stderr)
            handler.addFilter(_RedactingFilter(secrets))
            logger.addHandler(handler)
            logger.setLevel(logging.INFO)
        else:
            logger.setLevel(logging.CRITICAL + 1)
