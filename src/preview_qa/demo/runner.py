"""`preview-qa demo`: the real run path against the bundled demo site, with a scripted LLM instead of a paid one."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import click
import yaml

from preview_qa import app
from preview_qa.config import RunConfig
from preview_qa.demo.mail import DemoInbox
from preview_qa.demo.scripted_llm import ScriptedLLM, load_scenarios
from preview_qa.demo.shop import DemoShop
from preview_qa.manifest import loader
from preview_qa.manifest.models import Inbox
from preview_qa.planning.planner import Planner, PlanOptions
from preview_qa.results import ProofVerdict, RunResult, Status, TestResult
from preview_qa.selection.repository import MemoryRepository

HERE = Path(__file__).parent
PLAN = HERE / "plan.yml"  # `demo --plan`: the change planned for, and the scripted drafts (issue #39)
DEMO_PASSWORD = "demo-pass-123"
INBOX_PORT = 1080  # qa.yml's inbox: where `demo.serve` serves the demo's mail catcher (the demo itself takes any port)
# The demo is a smoke test too: it succeeds only when every test ends as intended.
INTENDED = {"Checkout page works": Status.FAILED}
# Run with --prove: each passing test is proven, but for the one that checks only the URL of a save.
VACUOUS = "Settings are saved (URL only)"


def run_demo(
    out: Path,
    concurrency: int,
    only: list[str],
    headless: bool,
    verbose: bool,
    env: Mapping[str, str],
    plan: bool = False,
    keywords: list[str] | None = None,
    chromium: str | None = None,
    cdp_url: str | None = None,
) -> RunResult:
    """The demo's run; with `plan`, planning after it for the change demo/plan.yml describes (its drafting turns first)."""
    manifest = loader.load(HERE / "qa.yml")
    scenarios = [*(load_scenarios(PLAN) if plan else []), *load_scenarios(HERE / "agent.yml")]
    with (
        DemoInbox() as inbox,
        DemoShop(password=DEMO_PASSWORD, mail_port=inbox.smtp_port) as site,
        ScriptedLLM(scenarios) as llm,
    ):
        manifest = manifest.model_copy(update={"inbox": Inbox(maildev=inbox.url)})  # the demo's own catcher
        config = RunConfig(
            manifest=HERE / "qa.yml",
            base_url=site.url,
            out=out,
            provider="openai",
            model="scripted-demo",
            api_key="demo-key",
            llm_base_url=llm.url,
            concurrency=concurrency,
            headless=headless,
            only=only,
            keywords=keywords or [],
            chromium=chromium,
            cdp_url=cdp_url,
            prove=True,
        )
        change = yaml.safe_load(PLAN.read_text(encoding="utf-8"))
        repo = MemoryRepository(change["repository"])  # the demo shop's source, as a Next.js app would lay it out
        planner = Planner(manifest, config, PlanOptions(change["changed_files"], repo=repo))
        result = app.execute(manifest, config, {**env, "DEMO_PASSWORD": DEMO_PASSWORD}, verbose, planner if plan else None)
    _tell(result, out)
    return result


def off_script(result: RunResult) -> bool:
    """The demo's own rule, instead of --fail-on: it fails when a test did not end as intended, or planning (with
    --plan) proposed no draft."""
    return bool(_wrong(result)) or (result.plan is not None and not result.plan.yaml)


def _wrong(result: RunResult) -> list[TestResult]:
    return [t for t in result.tests if t.status is not INTENDED.get(t.name, Status.PASSED) or _unproven(t)]


def _intended_proof(test: TestResult) -> ProofVerdict:
    return ProofVerdict.VACUOUS if test.name == VACUOUS else ProofVerdict.PROVEN


def _unproven(test: TestResult) -> bool:
    return test.status is Status.PASSED and (test.proof is None or test.proof.verdict is not _intended_proof(test))


def _tell(result: RunResult, out: Path) -> None:
    wrong = _wrong(result)
    for t in wrong:
        if _unproven(t):
            proof = t.proof.verdict.value if t.proof else "not proven at all"
            click.echo(f"demo: {t.name!r} is {proof}, not {_intended_proof(t).value}", err=True)
        else:
            intended = INTENDED.get(t.name, Status.PASSED).value
            click.echo(f"demo: {t.name!r} ended {t.status.value}, not {intended}: {t.reason}", err=True)
    vacuous = next((t for t in result.tests if t.name == VACUOUS and t.proof is not None), None)
    if vacuous is not None and vacuous.proof is not None:
        click.echo(f"demo: {VACUOUS!r} is {vacuous.proof.verdict.value} on purpose: it {vacuous.proof.reason}.")
    if not wrong:
        click.echo(
            "demo: every test ended as intended (one fails on purpose; the other passing tests are proven). "
            f"Open {out / 'report.html'} or {out / 'results.json'}."
        )
