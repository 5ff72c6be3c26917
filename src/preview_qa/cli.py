# Over 400 lines: every command's flags are declared here, one click decorator each (the logic is in app.py).
# run is over 60 lines: its parameters are its flags, one a line, and its body builds the RunConfig from them.
"""The `preview-qa` command: flags -> RunConfig -> app; how each command ended -> one exit code (`exit_code`)."""

from __future__ import annotations

import os
import re
import sys
import tempfile
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import click

from preview_qa import app
from preview_qa.config import (
    BROWSER_START_TIMEOUT_S,
    DEFAULT_CACHE,
    DEFAULT_OUT,
    FailOn,
    FailRules,
    RunConfig,
    TraceMode,
    default_concurrency,
    fall_back_recordings_kept,
    find_chromium,
    on_default_branch,
)
from preview_qa.errors import PreviewQaError
from preview_qa.lifecycle import ExitCode, exit_with
from preview_qa.manifest import loader
from preview_qa.manifest.models import Manifest
from preview_qa.providers import PROVIDERS, Provider
from preview_qa.results import PlanSummary, RunResult, StopReason, error_line
from preview_qa.secrets.safe_stderr import SafeStderr

FAIL_ON_HELP = (
    "Exit 1 when a test failed or errored (failed) | only when one errored (errored) | only for regressions (regressions; "
    "with --baseline-url: a failure that also fails on the baseline does not count; errors do) | also when a "
    "drifted replay was healed by the agent (healed) | also when --prove found a test vacuous (vacuous) | also when a "
    "test looks different from the default branch (visual; expect.visual) | also when a test passed on the agent's word "
    "alone (unverified) | never. Several rules, comma-separated, fail when any does: unverified,vacuous,visual."
)


CRASH_LOG = "internal-error.log"  # our own crash's traceback, in the results folder (else the temp folder)


class UsageError(PreviewQaError):
    """A flag's value the user can fix."""


@dataclass(frozen=True)
class RunEnded:
    """A run that ended with its results (cancelled or not), and the rule that says whether its tests fail it."""

    result: RunResult
    fails: Callable[[RunResult], bool] = FailRules().fails


Ended = RunEnded | Exception | KeyboardInterrupt | None  # None: a command that runs no tests did its job


def exit_code(ended: Ended) -> ExitCode:
    """Every way a command can end, as the code its process exits with: the one place that decides it."""
    match ended:
        case None:
            return ExitCode.OK
        case RunEnded(result=result) if result.stop_reason is StopReason.CANCELLED:
            return ExitCode.CANCELLED
        case RunEnded(result=result) if result.baseline_error is not None:  # bad input found late; results written
            return ExitCode.USAGE
        case RunEnded(result=result, fails=fails):
            return ExitCode.FAILED if fails(result) else ExitCode.OK
        case app.ReportersFailed(result=result):  # an output is missing: no success, whatever the tests did
            return ExitCode.CANCELLED if result.stop_reason is StopReason.CANCELLED else ExitCode.FAILED
        case PreviewQaError():
            return ExitCode.USAGE
        case KeyboardInterrupt():  # Ctrl-C before the run's own event loop took the signals over
            return ExitCode.CANCELLED
        case _:  # our own crash outside any test (inside one, that test errors and the run goes on)
            return ExitCode.INTERNAL_ERROR


class _Command(click.Command):
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


class _Commands(click.Group):
    """preview-qa's commands: each one a _Command, so that each ends through `exit_code`."""

    command_class = _Command


class _LinesType(click.types.StringParamType):
    """A repeatable option whose environment variable holds one value per line (the action's multi-line inputs)."""

    envvar_list_splitter = "\n"


_LINES = _LinesType()


class _WordsType(click.types.StringParamType):
    """A repeatable option whose values may also come as one comma- or space-separated list (the action's `tags`)."""

    def split_envvar_value(self, rv: str) -> list[str]:
        return _words([rv])


_WORDS = _WordsType()


def _words(values: tuple[str, ...] | list[str]) -> list[str]:
    return [word for value in values for word in re.split(r"[\s,]+", value) if word]


def _accepted(manifest: Manifest, names: list[str]) -> list[str]:
    """--accept-visual's test names, each one a test of the manifest."""
    names = [n.strip() for n in names if n.strip()]
    unknown = [n for n in names if n not in {t.name for t in manifest.tests}]
    if unknown:
        raise UsageError(f"--accept-visual names no test of the manifest: {', '.join(map(repr, unknown))}; give a test's name.")
    return names


def _env(*names: str) -> list[str]:
    """Environment variables an option falls back to: the action's INPUT_* (hyphens kept) and our own."""
    return list(names)


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="preview-qa")
def main() -> None:
    """Test a preview deployment with AI browser agents and get a verdict you can trust."""


def fail_on_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """--fail-on, handed to the command as FailRules (`run` and `merge`): one rule or several, comma-separated."""
    return click.option(
        "--fail-on",
        default=FailOn.FAILED.value,
        show_default=True,
        envvar=_env("INPUT_FAIL-ON"),
        callback=_fail_rules,
        help=FAIL_ON_HELP,
    )(f)


def _fail_rules(_ctx: click.Context, param: click.Parameter, value: str) -> FailRules:
    try:
        return FailRules.parse(value)
    except ValueError as e:
        raise click.BadParameter(str(e), param=param) from None


def llm_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """The LLM provider options, which `run` uses and `validate` checks."""
    options = [
        click.option(
            "--provider",
            default="openai",
            envvar=_env("INPUT_PROVIDER", "PREVIEW_QA_PROVIDER"),
            show_default=True,
            type=click.Choice(PROVIDERS),
        ),
        click.option("--model", envvar=_env("INPUT_MODEL", "PREVIEW_QA_MODEL"), help="Model name (provider default if unset)."),
        click.option("--api-key", envvar=_env("INPUT_API-KEY"), help="API key (else the provider's usual variable)."),
        click.option(
            "--llm-base-url",
            envvar=_env("INPUT_LLM-BASE-URL"),
            help="The provider's endpoint (any provider; with openai, any OpenAI-compatible server).",
        ),
    ]
    for option in reversed(options):
        f = option(f)
    return f


@main.command()
@click.argument("manifest", type=click.Path(dir_okay=False, path_type=Path), default="qa.yml", envvar="INPUT_MANIFEST")
@click.option(
    "--secret-env", is_flag=True, help="Print only the environment variables the tests' secrets are read from, one per line."
)
@click.option(
    "--offline",
    is_flag=True,
    help="Check the manifest only, not what `run` needs from the environment (secrets, API key, Chromium).",
)
@llm_options
def validate(
    manifest: Path,
    secret_env: bool,
    offline: bool,
    provider: Provider,
    model: str | None,
    api_key: str | None,
    llm_base_url: str | None,
) -> None:
    """Check a manifest, and that `run` would find what it needs in this environment (exit 2 if not)."""
    loaded = loader.load(manifest)
    if secret_env:  # the action forwards exactly these variables into its container
        click.echo("\n".join(dict.fromkeys(test.secret_env(name) for test in loaded.tests for name in test.secrets)))
        return
    if not offline:
        app.preflight(loaded, os.environ, provider, model, api_key, llm_base_url, find_chromium())
    checked = "valid" if offline else "valid, and its secrets, API key and Chromium are there"
    click.echo(f"{manifest}: {len(loaded.tests)} test(s), {checked}.")


@main.command()
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path), default=".")
@click.option("--force", is_flag=True, help="Overwrite the files if they exist.")
def init(directory: Path, force: bool) -> None:
    """Write a commented starter qa.yml and .github/workflows/preview-qa.yml into DIRECTORY (the repository's root)."""
    from preview_qa.starter import starter_files

    planned = {directory / target: text for target, text in starter_files().items()}
    existing = [str(path) for path in planned if path.exists()]
    if existing and not force:
        raise UsageError(
            f"{' and '.join(existing)} already exist{'s' if len(existing) == 1 else ''}; nothing was written "
            "(--force overwrites)."
        )
    for path, text in planned.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        click.echo(f"wrote {path}")
    click.echo(
        "Next: add the repository secrets OPENAI_API_KEY and QA_PASSWORD, point base-url in the workflow at your "
        "previews, and write your own tests in qa.yml (`preview-qa validate --offline` checks it)."
    )


@main.command("export")
@click.argument("manifest", type=click.Path(dir_okay=False, path_type=Path), default="qa.yml")
@click.option("--test", "name", required=True, metavar="NAME", help="The test to export (its name in the manifest).")
@click.option(
    "--results",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    help="A results folder (`run --out`) in which the test passed after an agent run.",
)
@click.option(
    "--cache",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    help="The replay cache (`run --cache`) that holds the test's recording.",
)
@click.option(
    "--provider",
    default="openai",
    show_default=True,
    type=click.Choice(PROVIDERS),
    help="With --cache: the provider of the run that recorded it (the cache keeps one recording per model).",
)
@click.option("--model", help="With --cache: the model of the run that recorded it (provider default if unset).")
@click.option(
    "--lang",
    type=click.Choice(["python", "ts"]),
    default="python",
    show_default=True,
    help="python: a pytest-playwright test; ts: an @playwright/test spec.",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, allow_dash=True, path_type=Path),
    help="The file to write (- for stdout); default: test_<name>.py or <name>.spec.ts here.",
)
@click.option("--force", is_flag=True, help="Overwrite the file if it exists.")
def export(
    manifest: Path,
    name: str,
    results: Path | None,
    cache: Path | None,
    provider: Provider,
    model: str | None,
    lang: str,
    output: Path | None,
    force: bool,
) -> None:
    """Write a test that passed as an ordinary Playwright test you can commit and run without preview-qa or an LLM."""
    from preview_qa.engine.replay_cache import RecordingCache
    from preview_qa.export import Language, export_test, file_name, sources

    if (results is None) == (cache is None):
        raise UsageError("give either --results (a results folder the test passed in) or --cache (the replay cache).")
    loaded = loader.load(manifest)
    spec = sources.find_test(loaded, name)
    source = (
        sources.from_results(results, spec)
        if results
        else sources.from_cache(RecordingCache(cache or Path(), loaded, provider, model), spec)
    )
    text = export_test(spec, source.history, source.origin, f"{manifest}:{spec.line}", Language(lang))
    if output == Path("-"):
        click.echo(text, nl=False)
        return
    path = output or Path(file_name(spec.name, Language(lang)))
    if path.exists() and not force:
        raise UsageError(f"{path} already exists; nothing was written (--force overwrites).")
    path.write_text(text, encoding="utf-8")
    todos = sum(1 for line in text.splitlines() if line.lstrip().startswith(("# TODO", "// TODO")))
    click.echo(f"wrote {path}" + (f" ({todos} TODO(s) to write by hand)" if todos else ""))


@main.command()
def schema() -> None:
    """Print the manifest's JSON Schema (for editors: completion, hover help, checks as you type)."""
    from preview_qa.manifest.schema import render

    click.echo(render(), nl=False)


def run_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """The options `run` shares with the bundled demo."""
    options = [
        click.option(
            "--out",
            type=click.Path(file_okay=False, path_type=Path),
            default=DEFAULT_OUT,
            envvar=_env("INPUT_OUT"),
            show_default=True,
            help="Folder for results, reports and artifacts.",
        ),
        click.option(
            "--concurrency",
            type=click.IntRange(1, 64),
            default=default_concurrency(),
            envvar=_env("INPUT_CONCURRENCY"),
            show_default=True,
            help="Tests run at once.",
        ),
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
        click.option(
            "--cache",
            type=click.Path(file_okay=False, path_type=Path),
            default=DEFAULT_CACHE,
            envvar=_env("INPUT_CACHE", "PREVIEW_QA_CACHE"),
            show_default=True,
            help="Folder of recordings: a test that passed is replayed without agent LLM calls next time.",
        ),
        click.option(
            "--no-cache",
            is_flag=True,
            envvar=_env("PREVIEW_QA_NO_CACHE"),
            help="Always run the agent; neither read nor write the cache.",
        ),
        click.option(
            "--max-tokens",
            type=click.IntRange(1),
            envvar=_env("INPUT_MAX-TOKENS"),
            help="Per test: stop it as errored past this many LLM tokens (overrides the manifest).",
        ),
        click.option(
            "--max-cost-usd",
            type=click.FloatRange(0, min_open=True),
            envvar=_env("INPUT_MAX-COST-USD"),
            help="Per test: stop it as errored past this LLM cost in USD (overrides the manifest).",
        ),
        click.option(
            "--run-max-tokens",
            type=click.IntRange(1),
            envvar=_env("INPUT_RUN-MAX-TOKENS"),
            help="Whole run: start no further test once the finished ones used this many tokens.",
        ),
        click.option(
            "--run-max-cost-usd",
            type=click.FloatRange(0, min_open=True),
            envvar=_env("INPUT_RUN-MAX-COST-USD"),
            help="Whole run: start no further test once the finished ones cost this much (USD).",
        ),
        click.option(
            "--price-per-mtok",
            metavar="IN,OUT",
            envvar=_env("INPUT_PRICE-PER-MTOK"),
            help="The model's price in USD per million input and output tokens, e.g. 0.4,1.6 (else the price "
            "list shipped with preview-qa; a cost budget on a model it does not know needs this).",
        ),
        click.option(
            "--shard",
            metavar="I/N",
            envvar=_env("INPUT_SHARD"),
            help="Run only shard I of N (a stable, balanced share); combine the shards with `merge`.",
        ),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def selection_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """Tags and changed files: which tests `run` runs; see `selection.select`."""
    options = [
        click.option(
            "--tag",
            "tags",
            multiple=True,
            type=_WORDS,
            metavar="TAG",
            envvar=_env("INPUT_TAGS"),
            help="Run only the tests with this tag (repeatable: any of them).",
        ),
        click.option(
            "--skip-tag",
            "skip_tags",
            multiple=True,
            type=_WORDS,
            metavar="TAG",
            envvar=_env("INPUT_SKIP-TAGS"),
            help="Leave out the tests with this tag (repeatable).",
        ),
        click.option(
            "--changed-files",
            metavar="FILE",
            help="The files the change touched, one path a line (- for stdin): a test with `paths` runs only "
            "if one of them matches, else it is skipped.",
        ),
        click.option(
            "--changed-only",
            is_flag=True,
            envvar=_env("INPUT_CHANGED-ONLY"),
            help="In a GitHub Actions pull request run: list the PR's changed files (git, else the API) and "
            "select by them as --changed-files does.",
        ),
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
            type=_LINES,
            envvar=_env("INPUT_EXTRA-HEADERS"),
            help="HTTP header sent with the browser's requests (repeatable), e.g. a protection-bypass token.",
        ),
        click.option(
            "--http-credentials",
            metavar="USER:PASSWORD",
            envvar=_env("INPUT_HTTP-CREDENTIALS", "PREVIEW_QA_HTTP_CREDENTIALS"),
            help="HTTP basic auth for a password-protected preview, sent to the preview's origin only "
            "(best from the environment: PREVIEW_QA_HTTP_CREDENTIALS or the action's input).",
        ),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def _changed_files(source: str | None, changed_only: bool) -> list[str] | None:
    from preview_qa.selection.changed_files import changed_files

    found = changed_files(source, changed_only, os.environ, sys.stdin)
    if found.note:  # fixed text and the user's own file name only: no changed path is echoed (a PR names its files)
        click.echo(f"preview-qa: {found.note}", err=True)
    return found.files


def _speed_config(
    cache: Path,
    no_cache: bool,
    max_tokens: int | None,
    max_cost_usd: float | None,
    run_max_tokens: int | None,
    run_max_cost_usd: float | None,
    price_per_mtok: str | None,
    shard: str | None,
) -> dict[str, Any]:
    from preview_qa.engine.pricing import parse_override
    from preview_qa.selection.shard import parse_shard

    try:
        parsed = parse_shard(shard) if shard else None
        price = parse_override(price_per_mtok) if price_per_mtok else None
    except ValueError as e:
        raise UsageError(str(e)) from None
    return {
        "cache": None if no_cache else cache,
        "max_tokens": max_tokens,
        "max_cost_usd": max_cost_usd,
        "run_max_tokens": run_max_tokens,
        "run_max_cost_usd": run_max_cost_usd,
        "price_per_mtok": price,
        "shard": parsed,
    }


@main.command()
@click.argument("manifest", type=click.Path(dir_okay=False, path_type=Path), default="qa.yml", envvar="INPUT_MANIFEST")
@click.option(
    "--base-url",
    required=True,
    envvar=_env("INPUT_BASE-URL", "PREVIEW_QA_BASE_URL"),
    help="The preview deployment to test, e.g. https://pr-42.preview.example.com",
)
@llm_options
@click.option(
    "--wait-timeout",
    type=click.FloatRange(0),
    default=0,
    envvar=_env("INPUT_WAIT-TIMEOUT"),
    help="Seconds to wait for the preview to answer before the first test.",
)
@access_options
@fail_on_option
@click.option(
    "--comment/--no-comment",
    default=True,
    envvar=_env("INPUT_COMMENT"),
    show_default=True,
    help="In a GitHub Actions pull request run: post or update one PR comment with the results.",
)
@click.option(
    "--retries",
    type=click.IntRange(0, 5),
    envvar=_env("INPUT_RETRIES"),
    help="Run a failed or errored test again, from scratch, up to N more times (overrides the manifest).",
)
@click.option(
    "--baseline-url",
    envvar=_env("INPUT_BASELINE-URL"),
    help="After the run, run each failed or errored test once more here (production, or main's preview): "
    "it is a regression when it passes there.",
)
@click.option(
    "--accept-visual",
    multiple=True,
    metavar="NAME",
    help="A test whose visual change this PR means (repeatable; the action's accept-visual: one name a line): it is "
    "not marked changed (expect.visual).",
)
@click.option(
    "--trace",
    type=click.Choice([m.value for m in TraceMode]),
    default=TraceMode.RETAIN_ON_FAILURE.value,
    show_default=True,
    envvar=_env("INPUT_TRACE"),
    help="Keep a Playwright trace.zip per test: for every test, none, or the failed and errored ones.",
)
@click.option(
    "--browser-start-timeout",
    type=click.FloatRange(5, 600),
    default=BROWSER_START_TIMEOUT_S,
    show_default=True,
    envvar=_env("INPUT_BROWSER-START-TIMEOUT", "PREVIEW_QA_BROWSER_START_TIMEOUT"),
    help="Seconds a browser may take to start, per try (it is tried twice): more on a slow self-hosted runner.",
)
@click.option(
    "--prove/--no-prove",
    default=False,
    envvar=_env("INPUT_PROVE"),
    help="After a test passes, replay it against mutations of the preview (a save answering 500...): is it proven, "
    "weak or vacuous? See docs/proving.md.",
)
@click.option(
    "--plan/--no-plan",
    "plan_after",
    default=False,
    envvar=_env("INPUT_PLAN"),
    help="After the tests, draft tests for the changed routes no test covers (as `plan`); the PR comment lists them.",
)
@click.option(
    "--plan-max-cost-usd",
    type=click.FloatRange(0, min_open=True),
    envvar=_env("INPUT_PLAN-MAX-COST-USD"),
    help="With --plan: the most planning may cost (drafting and trial runs), in USD.",
)
@run_options
@selection_options
@speed_options
def run(
    manifest: Path,
    base_url: str,
    provider: Provider,
    model: str | None,
    api_key: str | None,
    llm_base_url: str | None,
    wait_timeout: float,
    extra_headers: tuple[str, ...],
    http_credentials: str | None,
    fail_on: FailRules,
    comment: bool,
    retries: int | None,
    baseline_url: str | None,
    accept_visual: tuple[str, ...],
    trace: str,
    browser_start_timeout: float,
    prove: bool,
    out: Path,
    concurrency: int,
    only: tuple[str, ...],
    headful: bool,
    verbose: bool,
    tags: tuple[str, ...],
    skip_tags: tuple[str, ...],
    changed_files: str | None,
    changed_only: bool,
    plan_after: bool,
    plan_max_cost_usd: float | None,
    **speed: Any,
) -> RunEnded:
    """Run a manifest's tests against a preview URL."""
    loaded = loader.load(manifest)
    base_url = _base_url(base_url)
    config = RunConfig(
        manifest=manifest,
        base_url=base_url,
        out=out,
        provider=provider,
        model=model,
        api_key=api_key,
        llm_base_url=llm_base_url,
        concurrency=concurrency,
        headless=not headful,
        extra_headers=_headers(extra_headers),
        http_credentials=_credentials(http_credentials),
        wait_timeout=wait_timeout,
        only=list(only),
        tags=_words(tags),
        skip_tags=_words(skip_tags),
        changed_files=_changed_files(changed_files, changed_only),
        fail_on=fail_on,
        comment=comment,
        retries=retries,
        baseline_url=_baseline_url(baseline_url, base_url, fail_on),
        trace=TraceMode(trace),
        browser_start_timeout=browser_start_timeout,
        keep_fall_back_recordings=fall_back_recordings_kept(os.environ),
        prove=prove,
        accept_visual=_accepted(loaded, [*accept_visual, *os.environ.get("INPUT_ACCEPT-VISUAL", "").splitlines()]),
        visual_references=on_default_branch(os.environ),  # only the default branch's screenshots become the reference
        **_speed_config(**speed),
    )
    return execute(loaded, config, verbose, _planner(loaded, config, plan_after, plan_max_cost_usd))


def execute(manifest: Manifest, config: RunConfig, verbose: bool, plan: app.Planner | None = None) -> RunEnded:
    """The run in this process's environment, and the rule its tests are held to; a plan's YAML beside its results."""
    result = app.execute(manifest, config, os.environ, verbose, plan)
    if result.plan is not None:
        tell_plan(result.plan, None, config.out / "plan.yml")
    return RunEnded(result, config.fail_on.fails)


def _planner(manifest: Manifest, config: RunConfig, plan: bool, max_cost_usd: float | None) -> app.Planner | None:
    if not plan:
        return None
    from preview_qa.planning.planner import Planner, PlanOptions

    options = PlanOptions(config.changed_files, max_cost_usd=max_cost_usd, budget_flag="--plan-max-cost-usd")
    return Planner(manifest, config, options)


# `preview-qa plan` and `run --plan` (issue #39): drafts for the changed routes no test covers, tried before shown.
def plan_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """What `plan` drafts: routes by hand, drafts per route, where the YAML goes."""
    options = [
        click.option(
            "--route", "routes", multiple=True, metavar="PATH", help="Plan for this route too (repeatable), e.g. /settings."
        ),
        click.option(
            "--max", "most", type=click.IntRange(1, 10), default=3, show_default=True, help="Drafts per route, at most."
        ),
        click.option(
            "--write",
            type=click.Path(dir_okay=False, path_type=Path),
            help="Write the plan's YAML to FILE (never overwrites); else print it.",
        ),
    ]
    for option in reversed(options):
        f = option(f)
    return f


@main.command("plan")
@click.argument("manifest", type=click.Path(dir_okay=False, path_type=Path), default="qa.yml", envvar="INPUT_MANIFEST")
@click.option(
    "--base-url",
    required=True,
    envvar=_env("INPUT_BASE-URL", "PREVIEW_QA_BASE_URL"),
    help="The preview to read the pages of and try the drafts on.",
)
@llm_options
@plan_options
@access_options
@click.option("--changed-files", metavar="FILE", help="The files the change touched, one path a line (- for stdin).")
@click.option("--changed-only", is_flag=True, help="In a GitHub Actions pull request run: the PR's changed files.")
@click.option(
    "--max-cost-usd",
    type=click.FloatRange(0, min_open=True),
    help="The most planning may cost (drafting and trial runs), in USD.",
)
@click.option("--price-per-mtok", metavar="IN,OUT", help="The model's price in USD per million input and output tokens.")
@click.option(
    "--cache",
    type=click.Path(file_okay=False, path_type=Path),
    default=DEFAULT_CACHE,
    show_default=True,
    help="The replay cache: a route a recorded run passed through is covered.",
)
@click.option(
    "--prove", is_flag=True, help="Prove each draft that passes its trial run (docs/proving.md): a vacuous one is dropped."
)
@click.option("--headful", is_flag=True, help="Show the browser windows.")
@click.option("-v", "--verbose", is_flag=True, help="Show browser-use's own log on stderr (secrets redacted).")
def plan(
    manifest: Path,
    base_url: str,
    routes: tuple[str, ...],
    most: int,
    write: Path | None,
    changed_files: str | None,
    changed_only: bool,
    max_cost_usd: float | None,
    price_per_mtok: str | None,
    cache: Path,
    prove: bool,
    headful: bool,
    verbose: bool,
    extra_headers: tuple[str, ...],
    http_credentials: str | None,
    **llm: Any,
) -> None:
    """Draft tests for the changed routes no test covers, from what each page shows; each is run once, and only the
    drafts that pass are proposed, as manifest YAML."""
    from preview_qa.planning.planner import Planner, PlanOptions

    _refuse_existing(write)
    loaded = loader.load(manifest)
    changed = _changed_files(changed_files, changed_only)
    if changed is None and not routes:
        raise UsageError("give the changed files (--changed-files or --changed-only) or a --route to plan for.")
    speed = _speed_config(cache, False, None, None, None, None, price_per_mtok, None)
    config = RunConfig(
        manifest=manifest,
        base_url=_base_url(base_url),
        headless=not headful,
        extra_headers=_headers(extra_headers),
        http_credentials=_credentials(http_credentials),
        prove=prove,
        **llm,
        **speed,
    )
    options = PlanOptions(changed, list(routes), most, max_cost_usd)
    summary = app.plan_only(loaded, config, os.environ, Planner(loaded, config, options), verbose)
    tell_plan(summary, write)


def tell_plan(summary: PlanSummary, write: Path | None, results: Path | None = None) -> None:
    """The plan's routes and dropped drafts on stderr; its YAML into `write` (never over a file), into the results
    folder's `results` file, else on stdout."""
    for note in summary.notes:
        click.echo(f"plan: {note}", err=True)
    for route in summary.routes:
        click.echo(f"plan: {route.route}: {route.note or 'no test covers it'}", err=True)
    for name, why in summary.dropped.items():
        click.echo(f"plan: dropped {name!r}: {why}", err=True)
    if not summary.routes:
        click.echo("plan: every changed route has a test; nothing to draft.", err=True)
    elif not summary.yaml:
        click.echo("plan: no draft passed its trial run; nothing to propose.", err=True)
    elif results is not None:
        results.parent.mkdir(parents=True, exist_ok=True)
        results.write_text(summary.yaml, encoding="utf-8")
        click.echo(f"plan: the drafts that passed are in {results}", err=True)
    elif write is None:
        click.echo(summary.yaml, nl=False)
    else:
        _refuse_existing(write)
        with open(write, "x", encoding="utf-8") as f:  # "x": a file made meanwhile is not overwritten either
            f.write(summary.yaml)
        click.echo(f"wrote {write}", err=True)


def _refuse_existing(write: Path | None) -> None:
    if write is not None and write.exists():
        raise UsageError(f"{write} already exists; nothing was written (plan --write never overwrites: give a new file).")


@main.command()
@run_options
@click.option("--plan", is_flag=True, help="Then draft tests for the demo's changed routes, try them, write plan.yml.")
def demo(out: Path, concurrency: int, only: tuple[str, ...], headful: bool, verbose: bool, plan: bool) -> RunEnded:
    """Run the bundled demo: a demo site and a scripted agent, no API key needed."""
    from preview_qa.demo.runner import off_script, run_demo

    out = Path("demo-results") if out == Path(DEFAULT_OUT) else out
    result = run_demo(out, concurrency, list(only), not headful, verbose, os.environ, plan)
    if result.plan is not None:
        tell_plan(result.plan, None, out / "plan.yml")
    return RunEnded(result, off_script)


@main.command()
@click.argument("folders", nargs=-1, required=True, type=click.Path(file_okay=False, exists=True, path_type=Path))
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=DEFAULT_OUT,
    envvar=_env("INPUT_OUT"),
    show_default=True,
    help="Folder for the merged results, reports and artifacts.",
)
@fail_on_option
@click.option(
    "--comment/--no-comment",
    default=True,
    envvar=_env("INPUT_COMMENT"),
    show_default=True,
    help="In a GitHub Actions pull request run: post or update one PR comment with the merged results.",
)
def merge(folders: tuple[Path, ...], out: Path, fail_on: FailRules, comment: bool) -> RunEnded:
    """Merge the results folders of several shards (`run --shard I/N`) into one, with one report and exit code."""
    return RunEnded(app.merge(list(folders), out, comment, os.environ), fail_on.fails)


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
    log = (out or Path(tempfile.gettempdir())) / CRASH_LOG
    try:
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text(trace, encoding="utf-8")
        where = f"its traceback is in {log}"
    except OSError:
        sys.stderr.write(trace)
        where = "its traceback is above"
    return (
        f"preview-qa: internal error: {type(error).__name__}: {error_line(error)} (a bug in preview-qa, not a verdict "
        f"on your app: {where}; please report it)"
    )


def _step_output(code: ExitCode) -> None:
    """In GitHub Actions, the step's `exit-code` output (action.yml): known only now, after every reporter."""
    from preview_qa.reporters.github.commands import in_github_actions, output_text

    target = os.environ.get("GITHUB_OUTPUT")
    if not in_github_actions(os.environ) or not target:
        return
    try:
        with open(target, "a", encoding="utf-8") as f:
            f.write(output_text({"exit-code": str(int(code))}))
    except OSError as e:
        _error(f"the step's exit-code output could not be written to $GITHUB_OUTPUT: {error_line(e)}")


def _base_url(url: str, option: str = "--base-url") -> str:
    if not url.startswith(("http://", "https://")):
        raise UsageError(f"{option} must start with http:// or https:// (got {url!r}).")
    return url.rstrip("/")


def _baseline_url(url: str | None, base_url: str, fail_on: FailRules) -> str | None:
    if not url:  # the action's empty input
        if FailOn.REGRESSIONS in fail_on:
            raise UsageError(
                "--fail-on regressions needs --baseline-url: without a baseline no failure can be told apart from a regression."
            )
        return None
    baseline = _base_url(url, "--baseline-url")
    if baseline.lower() == base_url.lower():
        raise UsageError(
            f"--baseline-url is the same as --base-url ({base_url}); give the deployment to compare with, "
            "e.g. production or main's preview."
        )
    return baseline


def _credentials(value: str | None) -> tuple[str, str] | None:
    if not value or not value.strip():  # an action input left empty
        return None
    user, sep, password = value.strip().partition(":")
    if not sep or not user or not password:
        raise UsageError("--http-credentials must look like 'user:password' (the password itself may hold ':').")
    return user, password


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
