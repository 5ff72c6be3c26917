"""The click options several commands share, one decorator each (or one for a set always given together), and the
`Command` each command is: how it ended -> its exit code (preview_qa/exits.py's ladder), said in one line on stderr and,
in GitHub Actions, as the step's `exit-code` output."""

from __future__ import annotations

import functools
import os
import re
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import click

from preview_qa import app
from preview_qa.config import FailOn, FailRules, TraceMode, default_concurrency
from preview_qa.errors import PreviewQaError
from preview_qa.exits import Ended, RunEnded, exit_code
from preview_qa.lifecycle import ExitCode, exit_with
from preview_qa.providers import PROVIDERS
from preview_qa.reporters.output.files import write_crash_log
from preview_qa.results import StopReason, error_line
from preview_qa.secrets.safe_stderr import SafeStderr

FAIL_ON_HELP = (
    "What exits 1: a base word (failed, the default; errored; regressions; never), then, comma-separated, added words "
    "(healed, vacuous, visual, unverified, unchecked, findings, flaky): docs/cli.md, What fails the run."
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


def base_url_option(what: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """--base-url (`run`, `plan`): the preview, and in a monorepo NAME=URL for each app's own (repeatable)."""
    return click.option(
        "--base-url",
        "base_url",
        multiple=True,
        metavar="URL | NAME=URL",
        envvar=env("INPUT_BASE-URL", "PREVIEW_QA_BASE_URL"),
        help=f"{what} In a monorepo, also NAME=URL (repeatable) for each app with a preview of its own (NAME: its "
        "folder, apps/web, or web): its tests (app: NAME) run there, plan reads its routes there, and the plain URL "
        "may be left out.",
    )


class _OldSpellingsOption(click.Option):
    """An option whose names after the first are old spellings: accepted, not shown in --help."""

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        shown, self.opts = self.opts, self.opts[:1]
        try:
            return super().get_help_record(ctx)
        finally:
            self.opts = shown


def headed_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """--headed, as Playwright names it (`run`, `demo` and `plan`); --headful, its old name, still works."""
    return click.option(
        "--headed", "--headful", "headed", is_flag=True, cls=_OldSpellingsOption, help="Show the browser windows."
    )(f)


def browser_path_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """--browser-path (`run`, `demo`, `plan` and `validate`): the Chromium to drive, else found (agent/browsers/chromium.py)."""
    return click.option(
        "--browser-path",
        metavar="PATH",
        help="The Chromium or Chrome to drive (else PREVIEW_QA_CHROMIUM, else Playwright's own Chromium, else the "
        "system's Chrome or Chromium).",
    )(f)


def renamed_option(old: str, new: str, meant: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A flag that meant here what another flag means everywhere: refused, naming that flag (`meant`: what it meant)."""

    def refuse(ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
        if value is not None:
            raise click.UsageError(
                f"{ctx.info_name}'s {old} was {meant}: give it as {new}; {old} is a budget per test, as in `run`."
            )

    return click.option(old, hidden=True, expose_value=False, callback=refuse)


def trace_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """--trace (`run`, `explore`: its sweeps' and repros' tests)."""
    return click.option(
        "--trace",
        type=click.Choice([m.value for m in TraceMode]),
        default=TraceMode.RETAIN_ON_FAILURE.value,
        show_default=True,
        envvar=env("INPUT_TRACE"),
        help="Keep a Playwright trace.zip per test: for every test, none, or the failed and errored ones.",
    )(f)


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


def out_option(default: str, what: str = "results, reports and artifacts") -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """--out, with the folder the command writes when it is not given (`run`'s and `demo`'s differ)."""
    return click.option(
        "--out",
        type=click.Path(file_okay=False, path_type=Path),
        default=default,
        envvar=env("INPUT_OUT"),
        show_default=True,
        help=f"Folder for {what}.",
    )


@dataclass(frozen=True)
class RunFlags:
    """What `run_options` gives a command, as one `flags` argument."""

    concurrency: int
    only: list[str]
    keywords: list[str]  # -k
    headless: bool
    chromium: str | None  # --browser-path
    verbose: bool
    cdp_url: str | None = None  # --cdp-url: a remote browser instead of launching any


def run_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """The options `run` shares with the bundled demo (each has its own --out), handed to `f` as `flags: RunFlags`."""

    @functools.wraps(f)
    def with_flags(
        concurrency: int,
        only: tuple[str, ...],
        keywords: tuple[str, ...],
        headed: bool,
        browser_path: str | None,
        verbose: bool,
        cdp_url: str | None,
        **kw: Any,
    ) -> Any:
        given = (list(only), list(keywords), not headed, browser_path, verbose, cdp_url)
        return wrapped(flags=RunFlags(concurrency, *given), **kw)

    wrapped, f = f, with_flags
    options: list[Callable[[Callable[..., Any]], Callable[..., Any]]] = [
        click.option(
            "--concurrency",
            type=click.IntRange(1, 64),
            default=default_concurrency,
            envvar=env("INPUT_CONCURRENCY"),
            show_default="two a core, within free memory",
            help="Tests run at once.",
        ),
        click.option(
            "--only",
            multiple=True,
            metavar="NAME",
            help="Run only the test with exactly this name (repeatable); a name no test has is refused, with the nearest names.",
        ),
        click.option(
            "-k",
            "keywords",
            multiple=True,
            metavar="TEXT",
            help="Run only the tests whose name contains TEXT, case ignored (repeatable: any of them). A plain "
            "substring, as pytest -k takes one; no and/or/not expressions.",
        ),
        headed_option,
        browser_path_option,
        verbose_option,
        click.option(
            "--cdp-url",
            metavar="URL",
            callback=_cdp_url,
            envvar=env("INPUT_CDP-URL", "PREVIEW_QA_CDP_URL"),
            help="Run the tests in the Chromium at this DevTools endpoint (http://HOST:9222 or ws://...).",
        ),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def _cdp_url(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value and not value.startswith(("http://", "https://", "ws://", "wss://")):
        raise click.BadParameter(f"{value!r} is no DevTools endpoint: give http://HOST:PORT or a ws:// URL.")
    return value or None


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


class Command(click.Command):
    """Every command ends here: how it ended becomes the exit code, and anything but its tests' own outcome one line
    on stderr. A command with a results folder (`out`) also gives GitHub's step its `exit-code` output."""

    def invoke(self, ctx: click.Context) -> NoReturn:
        ended: Ended
        try:
            ended = super().invoke(ctx)
        except (Exception, KeyboardInterrupt) as e:
            ended = e
        code = exit_code(ended)
        out = ctx.params.get("out")
        _say(ended, out)
        if out is not None:
            _step_output(code)
        exit_with(code)


def command(name: str | None = None) -> Callable[[Callable[..., Any]], Command]:
    """A preview-qa command: one that ends through `exit_code`."""
    return click.command(name, cls=Command)


def _say(ended: Ended, out: Path | None) -> None:
    """One line on stderr for an end that is not the tests' own: what the user can fix, or where our crash's log is."""
    if isinstance(ended, RunEnded):
        if ended.result.baseline_error is not None and ended.result.stop_reason is not StopReason.CANCELLED:
            _error(f"{ended.result.baseline_error}; the preview's own results are written.")
    elif isinstance(ended, PreviewQaError | app.ReportersFailed):
        _error(str(ended))
    elif isinstance(ended, Exception):
        click.echo(_internal_error(ended, out), err=True)


def _error(message: str) -> None:
    click.echo(f"preview-qa: error: {message}", err=True)


def _internal_error(error: Exception, out: Path | None) -> str:
    """Our crash's traceback into a log, its secrets redacted as on stderr; one line that says so and points there."""
    trace = "".join(traceback.format_exception(error))
    if isinstance(sys.stderr, SafeStderr):  # the run knew its secrets by then: the log keeps none of them
        trace = sys.stderr.redactor.text(trace)
    try:
        where = f"its traceback is in {write_crash_log(trace, out)}"
    except OSError:
        sys.stderr.write(trace)
        where = "its traceback is above"
    return (
        f"preview-qa: internal error: {type(error).__name__}: {error_line(error)} (a bug in preview-qa, not a verdict "
        f"on your app: {where}; please report it)"
    )


def _step_output(code: ExitCode) -> None:
    """In GitHub Actions, the step's `exit-code` output (action.yml): known only now, after every reporter."""
    from preview_qa.reporters.github.commands import append_outputs

    try:
        append_outputs(os.environ, {"exit-code": str(int(code))})
    except OSError as e:
        _error(f"the step's exit-code output could not be written to $GITHUB_OUTPUT: {error_line(e)}")
