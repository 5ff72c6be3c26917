"""`python -m preview_qa.demo.serve`: the demo site, its mail catcher and the scripted LLM as long-running servers, for
the action's self-test."""

from __future__ import annotations

import signal
import threading
from pathlib import Path

import click

from preview_qa.demo.mail import DemoInbox
from preview_qa.demo.runner import DEMO_PASSWORD, HERE, INBOX_PORT
from preview_qa.demo.scripted_llm import ScriptedLLM, load_scenarios
from preview_qa.demo.shop import DemoShop
from preview_qa.reporters.output.files import write_atomic


@click.command()
@click.option(
    "--scenarios",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    default=HERE / "agent.yml",
    show_default=True,
    help="Scripted agent turns (see preview_qa.demo.scripted_llm).",
)
@click.option("--site-port", type=int, default=0, help="Port of the demo site (0: any free port).")
@click.option(
    "--inbox-port", type=int, default=INBOX_PORT, show_default=True, help="Port of the mail catcher's API (qa.yml's inbox)."
)
@click.option(
    "--ready-file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Written once the servers listen: `site-url=...`, `llm-url=...` and `inbox-url=...` lines ($GITHUB_OUTPUT style).",
)
def main(scenarios: Path, site_port: int, inbox_port: int, ready_file: Path | None) -> None:
    """Serve until SIGTERM or SIGINT; the demo manifest's DEMO_PASSWORD is the site's password."""
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    with (
        DemoInbox(port=inbox_port) as inbox,
        DemoShop(password=DEMO_PASSWORD, port=site_port, mail_port=inbox.smtp_port) as site,
        ScriptedLLM(load_scenarios(scenarios)) as llm,
    ):
        lines = f"site-url={site.url}\nllm-url={llm.url}\ninbox-url={inbox.url}\n"
        click.echo(lines, nl=False)
        if ready_file is not None:
            write_atomic(ready_file, lines)  # atomic: a poller never reads half of it
        stop.wait()


if __name__ == "__main__":
    main()
