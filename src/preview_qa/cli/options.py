"""The click options several commands share, one decorator each (or one for a set always given together)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from preview_qa.config import DEFAULT_OUT, FailOn, FailRules, default_concurrency
from preview_qa.providers import PROVIDERS

FAIL_ON_HELP = (
    "Exit 1 when a test failed or errored (failed) | only when one errored (errored) | only for regressions (regressions; "
    "with --baseline-url: a failure that also fails on the baseline does not count; errors do) | also when a "
    "drifted replay was healed by the agent (healed) | also when --prove found a test vacuous (vacuous) | also when a "
    "test looks different from the default branch (visual; expect.visual) | also when a test passed on the agent's word "
    "alone (unverified) | also when a test passed with no page check of its own that held, on an LLM's word, quotes or "
    "not (unchecked; for required checks on pull requests from outside the team) | never. Several rules, "
    "comma-separated, fail when any does: unverified,vacuous,visual."
)


class _LinesType(click.types.StringParamType):
    """A repeatable option whose environment variable holds one value per line (the action's multi-line inputs)."""

    envvar_list_splitter = "\n"


LINES = _LinesType()


class _WordsType(click.types.StringParamType):
    """A repeatable option whose values may also come as one comma- or space-separated list (the action's `tags`)."""

    def split_envvar_value(self, rv: str) -> list[str]:
        return words([rv])


WORDS = _WordsType()


def words(values: tuple[str, ...] | list[str]) -> list[str]:
    return [word for value in values for word in re.split(r"[\s,]+", value) if word]


def env(*names: str) -> list[str]:
    """Environment variables an option falls back to: the action's INPUT_* (hyphens kept) and our own."""
    return list(names)


def manifest_argument(f: Callable[..., Any]) -> Callable[..., Any]:
    """MANIFEST, qa.yml unless given (`validate`, `run` and `plan`)."""
    return click.argument("manifest", type=click.Path(dir_okay=False, path_type=Path), default="qa.yml", envvar="INPUT_MANIFEST")(
        f
    )


def headful_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """--headful (`run`, `demo` and `plan`)."""
    return click.option("--headful", is_flag=True, help="Show the browser windows.")(f)


def verbose_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """-v/--verbose (`run`, `demo` and `plan`)."""
    return click.option("-v", "--verbose", is_flag=True, help="Show browser-use's own log on stderr (secrets redacted).")(f)


def fail_on_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """--fail-on, handed to the command as FailRules (`run` and `merge`): one rule or several, comma-separated."""
    return click.option(
        "--fail-on",
        default=FailOn.FAILED.value,
        show_default=True,
        envvar=env("INPUT_FAIL-ON"),
        callback=_fail_rules,
        help=FAIL_ON_HELP,
    )(f)


def _fail_rules(_ctx: click.Context, param: click.Parameter, value: str) -> FailRules:
    try:
        return FailRules.parse(value)
    except ValueError as e:
        raise click.BadParameter(str(e), param=param) from None


def provider_option(help: str | None = None, from_env: bool = False) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """--provider, handed to the command as one of PROVIDERS (`llm_options`, `export --cache`, `init --agents`, `mcp`);
    `from_env`: the action's input and PREVIEW_QA_PROVIDER when the flag is not given."""
    return click.option(
        "--provider",
        default="openai",
        envvar=env("INPUT_PROVIDER", "PREVIEW_QA_PROVIDER") if from_env else None,
        show_default=True,
        type=click.Choice(PROVIDERS),
        help=help,
    )


def llm_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """The LLM provider options, which `run` uses and `validate` checks."""
    options = [
        provider_option(from_env=True),
        click.option("--model", envvar=env("INPUT_MODEL", "PREVIEW_QA_MODEL"), help="Model name (provider default if unset)."),
        click.option("--api-key", envvar=env("INPUT_API-KEY"), help="API key (else the provider's usual variable)."),
        click.option(
            "--llm-base-url",
            envvar=env("INPUT_LLM-BASE-URL"),
            help="The provider's endpoint (any provider; with openai, any OpenAI-compatible server).",
        ),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def run_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """The options `run` shares with the bundled demo."""
    options: list[Callable[[Callable[..., Any]], Callable[..., Any]]] = [
        click.option(
            "--out",
            type=click.Path(file_okay=False, path_type=Path),
            default=DEFAULT_OUT,
            envvar=env("INPUT_OUT"),
            show_default=True,
            help="Folder for results, reports and artifacts.",
        ),
        click.option(
            "--concurrency",
            type=click.IntRange(1, 64),
            default=default_concurrency(),
            envvar=env("INPUT_CONCURRENCY"),
            show_default=True,
            help="Tests run at once.",
        ),
        click.option("--only", multiple=True, help="Run only the test with this name (repeatable)."),
        headful_option,
        verbose_option,
    ]
    for option in reversed(options):
        f = option(f)
    return f


def access_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """What the browser sends to reach a protected preview (`run` and `plan`), to the preview's origin only."""
    options = [
        click.option(
            "--extra-header",
            "extra_headers",
            multiple=True,
            metavar="'NAME: VALUE'",
            type=LINES,
            envvar=env("INPUT_EXTRA-HEADERS"),
            help="HTTP header sent with the browser's requests (repeatable), e.g. a protection-bypass token.",
        ),
        click.option(
            "--http-credentials",
            metavar="USER:PASSWORD",
            envvar=env("INPUT_HTTP-CREDENTIALS", "PREVIEW_QA_HTTP_CREDENTIALS"),
            help="HTTP basic auth for a password-protected preview, sent to the preview's origin only "
            "(best from the environment: PREVIEW_QA_HTTP_CREDENTIALS or the action's input).",
        ),
    ]
    for option in reversed(options):
        f = option(f)
    return f
