"""Shared fixtures: the fixture site, the scripted LLM server, environment isolation, and running the real CLI."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings
from junitparser import JUnitXml

from preview_qa.demo.scripted_llm import ScriptedLLM
from preview_qa.providers import DEFAULT_MODELS, Provider
from tests.groups import mark_shared_runs, property_tests_first
from tests.site import DemoSite
from tests.site.explore_pair import PairUrls, serve_pair
from tests.site.signals import SignallingLLM

# No test asserts a time: hypothesis' per-example deadline is off, so a busy machine slows a property, never fails it.
settings.register_profile("no-deadline", deadline=None)
settings.load_profile("no-deadline")


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the marks (its worker's hook of the same name)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    mark_shared_runs(items)  # tests reading one shared run go to one worker (tests/groups.py); the rest one by one
    property_tests_first(items)  # the long unit tests handed out before the short ones, not last (tests/groups.py)


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """Two workers a core for `--numprocesses=logical` (the README's command): an e2e test spends much of its wall
    waiting on a browser, a page or the scripted LLM, and two workers left a quarter of two cores idle (9.8 min with
    four, 12.5 to 13.7 with two: docs/dev/suite-time.md). PYTEST_XDIST_AUTO_NUM_WORKERS, if set, decides instead."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None  # pytest-xdist's own hook reads it
    return 2 * len(os.sched_getaffinity(0))


DEMO_PASSWORD = "s3cr3t-Pa55-word-4242"  # distinctive, so a leak anywhere is easy to find
ISOLATED_PREFIXES = (
    "OPENAI_",
    "ANTHROPIC_",
    "GOOGLE_",
    "GEMINI_",
    "AZURE_",
    "OLLAMA_",
    "BROWSER_USE_",
    "GITHUB_",
    "INPUT_",
    "RUNNER_",
    "PREVIEW_QA_",
)


def clean_env(**extra: str) -> dict[str, str]:
    """The parent's environment without anything that could change a run (provider keys, CI variables)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(ISOLATED_PREFIXES) and k != "CI"}
    # No replay cache unless a test asks for one: a trace recorded by one test must never decide another's verdict.
    env.update(ANONYMIZED_TELEMETRY="false", DEMO_PASSWORD=DEMO_PASSWORD, PYTHONUNBUFFERED="1", PREVIEW_QA_NO_CACHE="1")
    # A busy machine's browser start, as a slow runner's: at load 16 one took 23 s of the default 30 s a try, and a test
    # whose browser missed it twice errored. The tests of the start itself pass --browser-start-timeout (flags first).
    env.update(PREVIEW_QA_BROWSER_START_TIMEOUT="90")
    # No Playwright trace unless a test reads one (tests/e2e/test_trace.py, test_grounded.py, test_cache_replay.py, the
    # action's run): its screencast was a quarter of an agent test's CPU, and the suite is CPU-bound. As the action's
    # `trace: off`; a --trace flag wins over it.
    env.update({"INPUT_TRACE": "off"})
    env.update(extra)
    return env


@pytest.fixture(scope="session")
def site() -> Iterator[DemoSite]:
    with DemoSite(password=DEMO_PASSWORD) as s:
        yield s


@pytest.fixture(scope="session")
def explore_pair() -> Iterator[PairUrls]:
    """The explore fixture pair (tests/site/explore_pair.py): main's and the PR's base URLs, each on a free port."""
    with serve_pair() as urls:
        yield urls


@pytest.fixture
def llm_server() -> Iterator[Callable[..., ScriptedLLM]]:
    """A factory: `llm_server(scenarios, latency=0.0)` starts a ScriptedLLM that is stopped after the test."""
    started: list[ScriptedLLM] = []

    def start(scenarios: list[dict[str, Any]] | dict[str, Any], latency: float = 0.0) -> ScriptedLLM:
        server = ScriptedLLM(scenarios, latency=latency)
        server.start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@dataclass
class CliRun:
    """What a user sees after running the command: exit code, output, and the results folder."""

    exit_code: int
    stdout: str
    stderr: str
    out: Path
    llm: ScriptedLLM | None

    @property
    def results(self) -> dict[str, Any]:
        return json.loads((self.out / "results.json").read_text(encoding="utf-8"))

    def test(self, name: str) -> dict[str, Any]:
        return next(t for t in self.results["tests"] if t["name"] == name)

    @property
    def junit(self) -> JUnitXml:
        return JUnitXml.fromfile(str(self.out / "junit.xml"))

    def all_output_text(self) -> str:
        """stdout, stderr and every text file in the results folder, for leak checks."""
        texts = [self.stdout, self.stderr]
        for path in sorted(self.out.rglob("*")):
            if path.is_file() and path.suffix != ".png" and path.suffix != ".gif":
                texts.append(path.read_text(encoding="utf-8", errors="replace"))
        return "\n".join(texts)


def run_preview_qa(
    args: list[str], env: dict[str, str] | None = None, timeout: float = 300, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """The CLI as a user runs it: a separate process, real exit code, real stdout."""
    return subprocess.run(
        [sys.executable, "-m", "preview_qa", *args],
        env=env or clean_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
    )


def run_in_process(
    args: list[str], env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """The CLI called in this process (click's CliRunner) with exactly `env` as its environment and temp folder, in
    `cwd`: the same exit code, stdout and stderr, without a new interpreter importing browser-use for each run. For
    tests that do not check the process itself (signals, its real exit, what its children write on file descriptor 2,
    what it leaves running)."""
    from click.testing import CliRunner

    from preview_qa import cli

    saved, saved_tempdir = dict(os.environ), tempfile.tempdir
    os.environ.clear()
    os.environ.update(env or clean_env())
    tempfile.tempdir = None  # found again from TMPDIR, as a new process would
    try:
        with contextlib.chdir(cwd or Path.cwd()):
            outcome = CliRunner().invoke(cli.main, args)
    finally:
        os.environ.clear()
        os.environ.update(saved)
        tempfile.tempdir = saved_tempdir
    stderr = outcome.stderr
    if outcome.exc_info is not None and not isinstance(outcome.exception, SystemExit):
        stderr += "".join(traceback.format_exception(*outcome.exc_info))  # as Python prints it, with exit code 1
    return subprocess.CompletedProcess(args, outcome.exit_code, outcome.stdout, stderr)


def run_args(manifest: Path, base_url: str, out: Path, llm: ScriptedLLM | None, *extra: str) -> list[str]:
    """`preview-qa run` of `manifest` against `base_url` into `out`, with the scripted LLM when there is one."""
    args = ["run", str(manifest), "--base-url", base_url, "--out", str(out)]
    if llm is not None:  # the model is "scripted" over OpenAI, else the provider's default (the cloud takes no other)
        provider = llm.wire.provider
        model = "scripted" if provider == "openai" else DEFAULT_MODELS[provider]
        args += ["--provider", provider, "--llm-base-url", llm.url, "--api-key", "test-key", "--model", model]
    return [*args, *extra]


def preview_qa_run(
    manifest: Path,
    base_url: str,
    out: Path,
    llm: ScriptedLLM | None,
    *extra: str,
    env: dict[str, str] | None = None,
    process: bool = False,
    timeout: float = 300,
) -> CliRun:
    """One `preview-qa run` (see run_args): in this process, or as a process of its own with `process=True`."""
    args = run_args(manifest, base_url, out, llm, *extra)
    proc = run_preview_qa(args, env, timeout) if process else run_in_process(args, env)
    return CliRun(proc.returncode, proc.stdout, proc.stderr, out, llm)


def cached_cli(
    manifest: Path, base_url: str, llm: ScriptedLLM, cache: Path, env: dict[str, str], calls: dict[str, list[dict[str, Any]]]
) -> Callable[..., CliRun]:
    """`cli(out, *extra)`: one `preview-qa run` of `manifest` into `manifest`'s folder / out, with the replay cache at
    `cache`, three tests at once; the scripted LLM's calls during it kept in `calls[out]`."""

    def cli(out: str, *extra: str) -> CliRun:
        first = len(llm.calls)
        args = ("--cache", str(cache), "--concurrency", "3", *extra)
        run = preview_qa_run(manifest, base_url, manifest.parent / out, llm, *args, env=env)
        calls[out] = llm.calls[first:]
        return run

    return cli


@contextlib.contextmanager
def scripted_run(
    folder: Path,
    site: DemoSite,
    manifest: str,
    scenarios: list[dict[str, Any]] | None,
    *extra: str,
    env: dict[str, str] | None = None,
    latency: float = 0.0,
    timeout: float = 600,
    provider: Provider = "openai",
    process: bool = False,
    on_done: Callable[[str], None] | None = None,
) -> Iterator[CliRun]:
    """Write `manifest` into `folder`, start a ScriptedLLM playing `scenarios` over `provider`'s protocol, run
    `preview-qa run` against the fixture site into `folder/out` (in this process, or as a process of its own with
    `process=True`); the LLM server stays up (for request assertions) until the block ends. With `on_done`, the LLM
    calls it with a scenario's name as it serves that scenario's `done` turn (e.g. `site.signals.give`)."""
    path = folder / "qa.yml"
    path.write_text(textwrap.dedent(manifest), encoding="utf-8")
    with contextlib.ExitStack() as stack:
        kind: Any = ScriptedLLM if on_done is None else functools.partial(SignallingLLM, on_done=on_done)
        llm = stack.enter_context(kind(scenarios, latency=latency, provider=provider)) if scenarios is not None else None
        yield preview_qa_run(path, site.url, folder / "out", llm, *extra, env=env, process=process, timeout=timeout)


@pytest.fixture
def run_cli(tmp_path: Path, site: DemoSite) -> Callable[..., CliRun]:
    """`run_cli(manifest_yaml, scenarios, *extra_args, env=None, process=False)`: one `preview-qa run` against the
    fixture site (see scripted_run)."""

    def run(
        manifest: str,
        scenarios: list[dict[str, Any]] | None,
        *extra: str,
        env: dict[str, str] | None = None,
        latency: float = 0.0,
        timeout: float = 300,
        process: bool = False,
    ) -> CliRun:
        with scripted_run(
            tmp_path, site, manifest, scenarios, *extra, env=env, latency=latency, timeout=timeout, process=process
        ) as done:
            return done

    return run
