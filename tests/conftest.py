"""Shared fixtures: the fixture site, the scripted LLM server, environment isolation, and running the real CLI."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from junitparser import JUnitXml

from preview_qa.demo.scripted_llm import ScriptedLLM
from preview_qa.demo.site import DemoSite
from preview_qa.providers import DEFAULT_MODELS, Provider

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
    env.update(extra)
    return env


@pytest.fixture(scope="session")
def site() -> Iterator[DemoSite]:
    with DemoSite(password=DEMO_PASSWORD) as s:
        yield s


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
) -> Iterator[CliRun]:
    """Write `manifest` into `folder`, start a ScriptedLLM playing `scenarios` over `provider`'s protocol, run
    `preview-qa run` against the fixture site into `folder/out`; the LLM server stays up (for request assertions) until
    the block ends. The model is "scripted" for OpenAI, else the provider's default (the browser-use cloud takes no
    other name)."""
    path = folder / "qa.yml"
    path.write_text(textwrap.dedent(manifest), encoding="utf-8")
    args = ["run", str(path), "--base-url", site.url, "--out", str(folder / "out")]
    with contextlib.ExitStack() as stack:
        llm = stack.enter_context(ScriptedLLM(scenarios, latency=latency, provider=provider)) if scenarios is not None else None
        if llm is not None:
            model = "scripted" if provider == "openai" else DEFAULT_MODELS[provider]
            args += ["--provider", provider, "--llm-base-url", llm.url, "--api-key", "test-key", "--model", model]
        proc = run_preview_qa([*args, *extra], env=env or clean_env(), timeout=timeout)
        yield CliRun(proc.returncode, proc.stdout, proc.stderr, folder / "out", llm)


@pytest.fixture
def run_cli(tmp_path: Path, site: DemoSite) -> Callable[..., CliRun]:
    """`run_cli(manifest_yaml, scenarios, *extra_args, env=None)`: one `preview-qa run` against the fixture site."""

    def run(
        manifest: str,
        scenarios: list[dict[str, Any]] | None,
        *extra: str,
        env: dict[str, str] | None = None,
        latency: float = 0.0,
        timeout: float = 300,
    ) -> CliRun:
        with scripted_run(tmp_path, site, manifest, scenarios, *extra, env=env, latency=latency, timeout=timeout) as done:
            return done

    return run
