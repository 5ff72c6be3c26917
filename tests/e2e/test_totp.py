"""End to end: a TOTP seed as a secret. The fixture's /2fa page accepts only a valid code of its seed; the agent types
<secret>otp</secret> and the page gets a fresh code; then the replay types one too. Neither the seed nor any code the
run typed reaches an output."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pyotp
import pytest

from preview_qa.demo.scripted_llm import ScriptedLLM
from tests.conftest import clean_env, preview_qa_run, run_preview_qa
from tests.site import DEMO_TOTP_SEED, DemoSite

pytestmark = pytest.mark.e2e

MANIFEST = """\
version: 1
tests:
  - name: two-factor
    start: /2fa
    task: "[2fa] Type <secret>otp</secret> as the authentication code and verify it."
    secrets: {otp: {env: DEMO_TOTP_SEED, totp: true}}
    max_steps: 4
    expect: {text: Two-factor sign-in complete}
"""
SCENARIOS = [
    {
        "match": "[2fa]",
        "turns": [
            {
                "actions": [
                    {"input": {"element": "Authentication code", "text": "<secret>otp_bu_2fa_code</secret>"}},
                    {"click": {"element": "Verify"}},
                ]
            },
            {"done": {"status": "pass", "reason": "The page says two-factor sign-in complete."}},
        ],
    }
]


@dataclass
class Run:
    exit_code: int
    output: str  # stdout, stderr and every text file of the results folder
    codes: list[str]  # what the page got


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Run]]:
    folder: Path = tmp_path_factory.mktemp("totp")
    (folder / "qa.yml").write_text(MANIFEST, encoding="utf-8")
    env = clean_env(DEMO_TOTP_SEED=DEMO_TOTP_SEED.lower())
    del env["PREVIEW_QA_NO_CACHE"]
    done = {}
    with DemoSite() as site, ScriptedLLM(SCENARIOS) as llm:
        for name in ("agent", "replay"):
            before = len(site.totp_codes)
            # A process of its own: its stderr is the process's, with what its children write there.
            run = preview_qa_run(
                folder / "qa.yml", site.url, folder / name, llm, "--cache", str(folder / "cache"), env=env, process=True
            )
            output = (
                run.stdout
                + run.stderr
                + "".join(
                    p.read_text(encoding="utf-8", errors="replace")
                    for p in (folder / name).rglob("*")
                    if p.is_file() and p.suffix not in (".png", ".zip")
                )
            )
            done[name] = Run(run.exit_code, output, site.totp_codes[before:])
    yield done


@pytest.mark.parametrize("name", ["agent", "replay"])
def test_the_page_gets_a_valid_fresh_code(runs: dict[str, Run], name: str) -> None:
    run = runs[name]
    assert run.exit_code == 0, run.output[-3000:]
    assert len(run.codes) == 1 and pyotp.TOTP(DEMO_TOTP_SEED).verify(run.codes[0], valid_window=1), run.codes


def test_the_replay_replayed(runs: dict[str, Run]) -> None:
    assert '"path": "replayed"' in runs["replay"].output


@pytest.mark.parametrize("name", ["agent", "replay"])
def test_neither_the_seed_nor_a_typed_code_reaches_an_output(runs: dict[str, Run], name: str) -> None:
    run = runs[name]
    for secret in (DEMO_TOTP_SEED, DEMO_TOTP_SEED.lower(), *run.codes):
        assert secret not in run.output, secret
    assert "<secret>otp_bu_2fa_code</secret>" in run.output  # where the code was typed, the placeholder shows


def test_an_invalid_seed_is_refused_at_its_line(tmp_path: Path) -> None:
    (tmp_path / "qa.yml").write_text(MANIFEST, encoding="utf-8")
    proc = run_preview_qa(["validate", str(tmp_path / "qa.yml")], env=clean_env(DEMO_TOTP_SEED="not-base-32!!"))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "qa.yml:6: tests[0].secrets.otp" in proc.stderr and "DEMO_TOTP_SEED is not a TOTP seed" in proc.stderr, proc.stderr
