"""End to end: preview credentials stay on the preview. The fixture site asks for basic auth; its page loads an image,
a script, a frame and a fetch from a second origin (the same server as `localhost`, which records every request's
headers), and an image, a script and a frame through the preview's own redirects to it. The protection-bypass header
and the credentials reach the preview and never the other origin, on the agent's run and on its replay, in a browser
the run launched and in a remote one (--cdp-url)."""

from __future__ import annotations

import base64
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from preview_qa.demo.scripted_llm import ScriptedLLM
from tests.conftest import DEMO_PASSWORD, clean_env, preview_qa_run, run_preview_qa
from tests.e2e.remote_chromium import remote_chromium
from tests.site import COLLECTOR_HOST, DemoSite

pytestmark = pytest.mark.e2e

TOKEN = "Bypass-Token-Kestrel-7719"
USER, PASSWORD = "preview", "Basic-Auth-Heron-5521"
AUTHORIZATION = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
MANIFEST = """\
version: 1
tests:
  - name: third parties
    start: /third-party
    task: "[third parties] Check the page."
    max_steps: 3
    expect: {text: [Third-party page]}
"""
SCENARIOS = [
    {
        "match": "[third parties]",
        "turns": [{"actions": [{"wait": {"seconds": 1}}]}, {"done": {"status": "pass", "reason": "Seen."}}],
    }
]
Seen = list[tuple[str, str, dict[str, str]]]
RUNS = ["agent", "replay", "remote agent", "remote replay"]  # in this order: each replay replays the agent's recording


@dataclass
class Run:
    exit_code: int
    output: str
    seen: Seen  # (host, path, headers) of each request the run made


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Run]]:
    folder = tmp_path_factory.mktemp("credentials")
    (folder / "qa.yml").write_text(textwrap.dedent(MANIFEST), encoding="utf-8")
    env = clean_env(PREVIEW_QA_HTTP_CREDENTIALS=f"{USER}:{PASSWORD}")
    del env["PREVIEW_QA_NO_CACHE"]
    done = {}
    with (
        DemoSite(password=DEMO_PASSWORD, basic_auth=(USER, PASSWORD)) as site,
        ScriptedLLM(SCENARIOS) as llm,
        remote_chromium() as browser,
    ):
        for name in RUNS:
            before = len(site.header_log)
            remote = ["--cdp-url", browser.url, *(["--no-cache"] if name == "remote agent" else [])] if "remote" in name else []
            # A process of its own: its stderr is the process's, with what its children write there.
            run = preview_qa_run(
                folder / "qa.yml",
                site.url,
                folder / name,
                llm,
                "--cache",
                str(folder / "cache"),
                "--extra-header",
                f"x-vercel-protection-bypass: {TOKEN}",
                *remote,
                env=env,
                process=True,
            )
            output = (
                run.stdout
                + run.stderr
                + "".join(p.read_text(encoding="utf-8", errors="replace") for p in (folder / name).rglob("*") if p.is_file())
            )
            done[name] = Run(run.exit_code, output, site.header_log[before:])
    yield done


@pytest.mark.parametrize("name", RUNS)
def test_the_preview_gets_its_credentials_and_no_other_origin_does(runs: dict[str, Run], name: str) -> None:
    run = runs[name]
    assert run.exit_code == 0, run.output[-3000:]  # the preview asks for basic auth: it got it
    preview = [(path, headers) for host, path, headers in run.seen if host == "127.0.0.1"]
    other = [(path, headers) for host, path, headers in run.seen if host == COLLECTOR_HOST]
    assert preview and all(
        h.get("x-vercel-protection-bypass") == TOKEN and h.get("Authorization") == AUTHORIZATION for _, h in preview
    ), preview
    # each straight from the page, or through one of the preview's redirects (Playwright re-applies a route's headers
    # to every redirect hop, whatever its origin: the credentials must not ride along)
    assert {"/pixel.gif", "/lib.js", "/frame", "/api", "/redirected.gif", "/redirected.js", "/redirected-frame"} <= {
        path for path, _ in other
    }, other
    for path, headers in other:
        assert not {k.lower() for k in headers} & {"x-vercel-protection-bypass", "authorization"}, (path, headers)
        assert TOKEN not in str(headers) and PASSWORD not in str(headers)


def test_the_replays_really_replayed(runs: dict[str, Run]) -> None:
    assert '"path": "replayed"' in runs["replay"].output and '"path": "replayed"' in runs["remote replay"].output
    assert '"path": "replayed"' not in runs["remote agent"].output


@pytest.mark.parametrize("name", RUNS)
def test_no_credential_in_any_output(runs: dict[str, Run], name: str) -> None:
    output = runs[name].output
    assert TOKEN not in output and PASSWORD not in output and AUTHORIZATION.split()[1] not in output


def test_credentials_that_are_no_user_and_password_are_refused_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "qa.yml").write_text(textwrap.dedent(MANIFEST), encoding="utf-8")
    proc = run_preview_qa(
        ["run", str(tmp_path / "qa.yml"), "--base-url", "http://127.0.0.1:9", "--http-credentials", "no-colon-here"],
        env=clean_env(),
    )
    assert proc.returncode == 2 and "--http-credentials must look like 'user:password'" in proc.stderr
    assert "no-colon-here" not in proc.stderr
