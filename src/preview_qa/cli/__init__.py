"""The `preview-qa` command: one module per command (flags -> RunConfig -> app), the options they share and the
`Command` each is, ending through the one exit-code ladder (options.py), and their values read (values.py)."""

from __future__ import annotations

import click

from preview_qa.cli import demo, explore, export, init, mcp, merge, plan, run, validate


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="preview-qa")
def main() -> None:
    """Test a preview deployment with AI browser agents and get a verdict you can trust."""


for _command in (
    validate.validate,
    init.init,
    export.export,
    validate.schema,
    run.run,
    plan.plan,
    explore.explore,
    demo.demo,
    merge.merge,
    mcp.mcp,
):
    main.add_command(_command)
