# Over 400 lines: `run` has the most flags of any command, each option given in full.
# run is over 60 lines: its parameters are its flags, one a line, and its body builds the RunConfig from them.
"""`preview-qa run`: a manifest's tests against a preview URL, and the rule that says whether they fail the run."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from preview_qa import app
from preview_qa.cli.options import (
    WORDS,
    RunFlags,
    access_options,
    base_url_option,
    command,
    env,
    fail_on_option,
    llm_options,
    manifest_argument,
    out_option,
    run_options,
    trace_option,
    words,
)
from preview_qa.cli.plan import tell_plan
from preview_qa.cli.values import (
    UsageError,
    parse_base_url,
    parse_credentials,
    parse_headers,
    parse_previews,
    read_changed_files,
    read_last_failed,
    speed_config,
)
from preview_qa.config import (
    BROWSER_START_TIMEOUT_S,
    DEFAULT_CACHE,
    DEFAULT_OUT,
    WAIT_TIMEOUT_S,
    FailOn,
    FailRules,
    RunConfig,
    TraceMode,
    Vision,
    fall_back_recordings_kept,
    on_default_branch,
)
from preview_qa.exits import RunEnded
from preview_qa.manifest import loader
from preview_qa.manifest.models import Manifest
from preview_qa.providers import Provider


def _accepted(manifest: Manifest, names: list[str]) -> list[str]:
    """--accept-visual's test names, each one a test of the manifest."""
    names = [n.strip() for n in names if n.strip()]
    unknown = [n for n in names if n not in {t.name for t in manifest.tests}]
    if unknown:
        raise UsageError(f"--accept-visual names no test of the manifest: {', '.join(map(repr, unknown))}; give a test's name.")
    return names


def speed_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """The replay cache, budgets and sharding: passed to the command as keyword arguments, see `_speed_config`."""
    options = [
        click.option(
            "--cache",
            type=click.Path(file_okay=False, path_type=Path),
            default=DEFAULT_CACHE,
            envvar=env("INPUT_CACHE", "PREVIEW_QA_CACHE"),
            show_default=True,
            help="Folder of recordings: a test that passed is replayed without agent LLM calls next time.",
        ),
        click.option(
            "--no-cache",
            is_flag=True,
            envvar=env("PREVIEW_QA_NO_CACHE"),
            help="Always run the agent; neither read nor write the cache.",
        ),
        click.option(
            "--max-tokens",
            type=click.IntRange(1),
            envvar=env("INPUT_MAX-TOKENS"),
            help="Per test: stop it as errored past this many LLM tokens (overrides the manifest).",
        ),
        click.option(
            "--max-cost-usd",
            type=click.FloatRange(0, min_open=True),
            envvar=env("INPUT_MAX-COST-USD"),
            help="Per test: stop it as errored past this LLM cost in USD (overrides the manifest).",
        ),
        click.option(
            "--run-max-tokens",
            type=click.IntRange(1),
            envvar=env("INPUT_RUN-MAX-TOKENS"),
            help="Whole run: start no further test once the finished ones used this many tokens.",
        ),
        click.option(
            "--run-max-cost-usd",
            type=click.FloatRange(0, min_open=True),
            envvar=env("INPUT_RUN-MAX-COST-USD"),
            help="Whole run: start no further test once the finished ones cost this much (USD).",
        ),
        click.option(
            "--price-per-mtok",
            metavar="IN,OUT",
            envvar=env("INPUT_PRICE-PER-MTOK"),
            help="The model's price in USD per million input and output tokens, e.g. 0.4,1.6 (else the price "
            "list shipped with preview-qa; a cost budget on a model it does not know needs this).",
        ),
        click.option(
            "--shard",
            metavar="I/N",
            envvar=env("INPUT_SHARD"),
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
            type=WORDS,
            metavar="TAG",
            envvar=env("INPUT_TAGS"),
            help="Run only the tests with this tag (repeatable: any of them).",
        ),
        click.option(
            "--skip-tag",
            "skip_tags",
            multiple=True,
            type=WORDS,
            metavar="TAG",
            envvar=env("INPUT_SKIP-TAGS"),
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
            envvar=env("INPUT_CHANGED-ONLY"),
            help="In a GitHub Actions pull request run: list the PR's changed files (git, else the API) and "
            "select by them as --changed-files does.",
        ),
        click.option(
            "--impacted",
            is_flag=True,
            envvar=env("INPUT_IMPACTED"),
            help="With the changed files: a test without `paths` runs only if the change touches a page its last "
            "passing recording visited (docs/selection.md).",
        ),
    ]
    for option in reversed(options):
        f = option(f)
    return f


@command()
@manifest_argument
@base_url_option("The preview deployment to test, e.g. https://pr-42.preview.example.com.")
@llm_options
@click.option(
    "--wait-timeout",
    type=click.FloatRange(0),
    default=WAIT_TIMEOUT_S,
    show_default=True,
    envvar=env("INPUT_WAIT-TIMEOUT"),
    help="Seconds to wait for the preview to answer before the first test (any status but 429 and 5xx, which a "
    "deployment still starting gives); 0 = do not wait. The action's wait-timeout is this flag.",
)
@access_options
@fail_on_option
@click.option(
    "--comment/--no-comment",
    default=True,
    envvar=env("INPUT_COMMENT"),
    show_default=True,
    help="In a GitHub Actions pull request run: post or update one PR comment with the results.",
)
@click.option(
    "--retries",
    type=click.IntRange(0, 5),
    envvar=env("INPUT_RETRIES"),
    help="Run a failed or errored test again, from scratch, up to N more times (overrides the manifest).",
)
@click.option(
    "--repeat-each",
    type=click.IntRange(1, 100),
    default=1,
    metavar="N",
    help="Run each test N times, none retried, and report its pass rate.",
)
@click.option("--last-failed", is_flag=True, help="Run only the tests that failed or errored in --results DIR.")
@click.option(
    "--results",
    "results_dir",
    type=click.Path(file_okay=False, path_type=Path),
    metavar="DIR",
    help="With --last-failed: that run's results folder (default: --out).",
)
@click.option(
    "--baseline-url",
    envvar=env("INPUT_BASELINE-URL"),
    help="After the run, run each failed or errored test once more here (production, or main's preview): "
    "it is a regression when it passes there. Also drives expect.visual: each passing test with it replays its recording "
    "here, and the screenshots are compared with this run's.",
)
@click.option(
    "--accept-visual",
    multiple=True,
    metavar="NAME",
    help="A test whose visual change this PR means (repeatable; the action's accept-visual: one name a line): it is "
    "not marked changed (expect.visual).",
)
@trace_option
@click.option(
    "--llm-timeout",
    type=click.FloatRange(1, 3600),
    envvar=env("INPUT_LLM-TIMEOUT"),
    metavar="SECONDS",
    help="Per LLM call: give it up after this long (overrides the manifest's llm_timeout). Unset: 75 s at most for a "
    "hosted provider, 600 s for a model served on this machine or a private network.",
)
@click.option(
    "--max-output-tokens",
    type=click.IntRange(1),
    envvar=env("INPUT_MAX-OUTPUT-TOKENS"),
    help="Per LLM call: the most the model may answer (sent as max_completion_tokens, max_tokens or num_predict); "
    "unset, browser-use's own (4,096 for OpenAI's protocol).",
)
@click.option(
    "--vision",
    type=click.Choice([m.value for m in Vision]),
    envvar=env("INPUT_VISION"),
    help="Send the model screenshots: on, off (a text-only model: tests are judged on the pages' text, checks and "
    "quotes), or auto (until the provider says the model takes no images, then off for the rest of the run). "
    "Unset: the manifest's defaults.vision, else auto.",
)
@click.option(
    "--browser-start-timeout",
    type=click.FloatRange(5, 600),
    default=BROWSER_START_TIMEOUT_S,
    show_default=True,
    envvar=env("INPUT_BROWSER-START-TIMEOUT", "PREVIEW_QA_BROWSER_START_TIMEOUT"),
    help="Seconds a browser may take to start, per try (it is tried twice): more on a slow self-hosted runner.",
)
@click.option(
    "--prove/--no-prove",
    default=False,
    envvar=env("INPUT_PROVE"),
    help="After a test passes, replay it against mutations of the preview (a save answering 500...): is it proven, "
    "weak or vacuous? See docs/proving.md.",
)
@click.option(
    "--plan/--no-plan",
    "plan_after",
    default=False,
    envvar=env("INPUT_PLAN"),
    help="After the tests, draft tests for the changed routes no test covers (as `plan`); the PR comment lists them.",
)
@click.option(
    "--explore/--no-explore",
    "explore_after",
    default=False,
    envvar=env("INPUT_EXPLORE"),
    help="After the tests, `explore` the preview against --baseline-url: what this PR breaks, in the reports; "
    "`--fail-on findings` fails on it.",
)
@click.option(
    "--plan-max-cost-usd",
    type=click.FloatRange(0, min_open=True),
    envvar=env("INPUT_PLAN-MAX-COST-USD"),
    help="With --plan: the most planning may cost (drafting and trial runs), in USD.",
)
@out_option(DEFAULT_OUT)
@run_options
@selection_options
@speed_options
def run(
    manifest: Path,
    base_url: tuple[str, ...],
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
    repeat_each: int,
    last_failed: bool,
    results_dir: Path | None,
    baseline_url: str | None,
    accept_visual: tuple[str, ...],
    trace: str,
    vision: str | None,
    llm_timeout: float | None,
    max_output_tokens: int | None,
    browser_start_timeout: float,
    prove: bool,
    out: Path,
    flags: RunFlags,
    tags: tuple[str, ...],
    skip_tags: tuple[str, ...],
    changed_files: str | None,
    changed_only: bool,
    impacted: bool,
    plan_after: bool,
    explore_after: bool,
    plan_max_cost_usd: float | None,
    **speed: Any,
) -> RunEnded:
    """Run a manifest's tests against a preview URL."""
    if results_dir is not None and not last_failed:
        raise UsageError("--results names the run whose failed tests --last-failed runs again: give --last-failed too.")
    if impacted and changed_files is None and not changed_only:
        raise UsageError("--impacted needs the changed files: give --changed-files FILE (or -) or --changed-only.")
    loaded = loader.load(manifest)
    plain, app_urls = parse_previews(base_url, loaded.apps)
    config = RunConfig(
        manifest=manifest,
        base_url=plain,
        app_urls=app_urls,
        out=out,
        provider=provider,
        model=model,
        api_key=api_key,
        llm_base_url=llm_base_url,
        concurrency=flags.concurrency,
        chromium=flags.chromium,
        cdp_url=flags.cdp_url,
        headless=flags.headless,
        extra_headers=parse_headers(extra_headers),
        http_credentials=parse_credentials(http_credentials),
        wait_timeout=wait_timeout,
        only=_only(flags, last_failed, results_dir or out, loaded),
        keywords=flags.keywords,
        tags=words(tags),
        skip_tags=words(skip_tags),
        changed_files=read_changed_files(changed_files, changed_only),
        impacted=impacted,
        fail_on=fail_on,
        comment=comment,
        retries=retries,
        repeat_each=repeat_each,
        baseline_url=_baseline_url(baseline_url, plain, fail_on),
        trace=TraceMode(trace),
        vision=Vision(vision) if vision else None,
        llm_timeout=llm_timeout,
        max_output_tokens=max_output_tokens,
        browser_start_timeout=browser_start_timeout,
        keep_fall_back_recordings=fall_back_recordings_kept(os.environ),
        prove=prove,
        accept_visual=_accepted(loaded, [*accept_visual, *os.environ.get("INPUT_ACCEPT-VISUAL", "").splitlines()]),
        visual_references=on_default_branch(os.environ),  # only the default branch's screenshots become the reference
        **speed_config(**speed),
    )
    planner = _planner(loaded, config, plan_after, plan_max_cost_usd)
    return execute(loaded, config, flags.verbose, planner, _explorer(loaded, config, explore_after))


def _only(flags: RunFlags, last_failed: bool, results: Path, manifest: Manifest) -> list[str]:
    """--only's tests, or --last-failed's."""
    if not last_failed:
        return flags.only
    if flags.only:
        raise UsageError("--last-failed chooses the tests itself: give it or --only, not both.")
    return read_last_failed(results, [t.name for t in manifest.tests])


def execute(
    manifest: Manifest, config: RunConfig, verbose: bool, plan: app.Planner | None = None, explore: app.Explorer | None = None
) -> RunEnded:
    """The run in this process's environment, and the rule its tests are held to; a plan's YAML beside its results."""
    result = app.execute(manifest, config, os.environ, verbose, plan, explore)
    if result.plan is not None:
        tell_plan(result.plan, None, config.out / "plan.yml", drafting=plan is not None)
    return RunEnded(result, config.fail_on.fails)


def _planner(manifest: Manifest, config: RunConfig, plan: bool, max_cost_usd: float | None) -> app.Planner | None:
    if not plan:
        return None
    from preview_qa.planning.planner import Planner, PlanOptions

    options = PlanOptions(config.changed_files, max_cost_usd=max_cost_usd, budget_flag="--plan-max-cost-usd")
    return Planner(manifest, config, options)


def _explorer(manifest: Manifest, config: RunConfig, explore: bool) -> app.Explorer | None:
    if not explore:
        if FailOn.FINDINGS in config.fail_on:
            raise UsageError("--fail-on findings needs --explore: without an exploration there is no finding to fail on.")
        return None
    if config.baseline_url is None or config.base_url is None:
        missing = "--baseline-url (the deployment to compare with)" if config.base_url else "a plain --base-url"
        raise UsageError(f"--explore needs {missing}: it compares the preview's pages with the baseline's.")
    if config.shard is not None:  # every shard would explore the same pages, and `merge` keeps no exploration
        raise UsageError("--explore with --shard would explore once per shard: run `preview-qa explore` in a job of its own.")
    from preview_qa.explore.in_run import RunExploration

    return RunExploration(manifest, config, os.environ)


def _baseline_url(url: str | None, base_url: str | None, fail_on: FailRules) -> str | None:
    if not url:  # the action's empty input
        if FailOn.REGRESSIONS in fail_on:
            raise UsageError(
                "--fail-on regressions needs --baseline-url: without a baseline no failure can be told apart from a regression."
            )
        return None
    baseline = parse_base_url(url, "--baseline-url")
    if base_url is not None and baseline.lower() == base_url.lower():
        raise UsageError(
            f"--baseline-url is the same as --base-url ({base_url}); give the deployment to compare with, "
            "e.g. production or main's preview."
        )
    return baseline
