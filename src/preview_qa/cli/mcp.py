"""`preview-qa mcp`: the MCP server for coding agents, over stdio, serving the folder it is started in."""

from __future__ import annotations

import os
from pathlib import Path

import click

from preview_qa.cli.options import command, env, provider_option, renamed_option
from preview_qa.cli.values import UsageError
from preview_qa.providers import Provider

DEFAULT_RUN_MAX_COST_USD = 1.0


@command("mcp")
@provider_option("The LLM provider of the runs it starts (its API key from the provider's usual variable).", from_env=True)
@click.option("--model", envvar=env("INPUT_MODEL", "PREVIEW_QA_MODEL"), help="Model name (provider default if unset).")
@click.option(
    "--run-max-cost-usd",
    type=click.FloatRange(0, min_open=True),
    default=DEFAULT_RUN_MAX_COST_USD,
    show_default=True,
    help="The most one run_tests or plan_tests call (one run) may spend on the LLM, in USD (refused for a model of "
    "unknown price).",
)
@renamed_option("--max-cost-usd", "--run-max-cost-usd", "each call's budget")
@click.option(
    "--price-per-mtok",
    metavar="IN,OUT",
    envvar=env("INPUT_PRICE-PER-MTOK"),
    help="The model's price in USD per million input and output tokens, for a model preview-qa has no price for.",
)
def mcp(provider: Provider, model: str | None, run_max_cost_usd: float, price_per_mtok: str | None) -> None:
    """Serve this folder's tests to a coding agent over MCP (stdio): list_tests, run_tests, test_evidence, plan_tests,
    export_test. See docs/coding-agents.md."""
    import anyio

    from preview_qa.engine.pricing import parse_override
    from preview_qa.mcp.folder import Folder
    from preview_qa.mcp.server import serve
    from preview_qa.mcp.settings import Settings

    try:
        if price_per_mtok:
            parse_override(price_per_mtok)
    except ValueError as e:
        raise UsageError(str(e)) from None
    settings = Settings(Folder(Path.cwd()), dict(os.environ), provider, model, run_max_cost_usd, price_per_mtok)
    anyio.run(serve, settings)
