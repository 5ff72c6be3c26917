"""A model that reads no images, served as llama.cpp serves one (HTTP 500 "image input is not supported" to any request
with an image part): under --vision auto the first refusal turns screenshots off for the rest of the run, the call is
asked again without them, and the tests reach their verdicts, a failing one included; the run says once that vision
was off. --vision off sends no image from the start. Before, every test errored on the refusal."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from preview_qa.demo.scripted_llm import TEXT_ONLY_REFUSAL, ScriptedLLM, has_image
from tests.conftest import CliRun, preview_qa_run
from tests.site import DemoSite

pytestmark = pytest.mark.e2e

MANIFEST = """
version: 1
defaults: {max_steps: 3, timeout: 90}
tests:
  - name: home
    task: "[home] Check the home page names the shop."
    expect: {text: "Acme demo shop"}
  - name: wrong
    task: "[wrong] Check the home page says it is closed."
    expect: {text: "Closed for good"}
"""
SCENARIOS = [
    {"match": "[home]", "turns": [{"done": {"status": "pass", "reason": "It names the shop.", "quotes": ["Acme demo shop"]}}]},
    {"match": "[wrong]", "turns": [{"done": {"status": "pass", "reason": "It says so.", "quotes": ["Acme demo shop"]}}]},
]


def run(folder: Path, site: DemoSite, *flags: str, manifest: str = MANIFEST) -> tuple[CliRun, ScriptedLLM]:
    (folder / "qa.yml").write_text(textwrap.dedent(manifest), encoding="utf-8")
    with ScriptedLLM(SCENARIOS, text_only=True) as llm:
        done = preview_qa_run(folder / "qa.yml", site.url, folder / "out", llm, *flags)
    return done, llm


def test_auto_turns_vision_off_at_the_first_refusal_and_the_tests_reach_their_verdicts(tmp_path: Path, site: DemoSite) -> None:
    done, llm = run(tmp_path, site, "--concurrency", "2")  # both tests' first calls may be refused before either hears
    assert done.exit_code == 1, done.stdout + done.stderr  # "wrong" fails on its check; nothing errors
    assert (done.test("home")["status"], done.test("wrong")["status"]) == ("passed", "failed")
    assert done.test("wrong")["reason"].startswith("expectation text failed: expected visible text 'Closed for good'")
    refused = [c["status"] for c in llm.calls if c["kind"] == "refused"]
    assert 1 <= len(refused) <= 6 and set(refused) == {500}, refused  # each test's first call, and the SDK's 2 retries
    assert llm.requests and not any(has_image(r) for r in llm.requests)  # every request answered went without images
    (warning,) = [w for w in done.results["warnings"] if w.startswith("vision off")]
    assert TEXT_ONLY_REFUSAL[:30] in warning and ("from test 'home' on" in warning or "from test 'wrong' on" in warning)
    assert "vision off: the model takes no images" in " ".join(done.stdout.split())
    kinds = []
    for name in ("home", "wrong"):
        events = tmp_path / "out" / str(done.test(name)["artifacts"]["events"])
        kinds += [json.loads(line)["type"] for line in events.read_text(encoding="utf-8").splitlines()]
    assert kinds.count("vision_off") == 1 and "llm_error" not in kinds


@pytest.mark.parametrize("said_by", ["flag", "manifest"])
def test_vision_off_sends_no_image_from_the_start(tmp_path: Path, site: DemoSite, said_by: str) -> None:
    # in the manifest as people write it: a bare `off`, which YAML 1.1 reads as false
    manifest = MANIFEST.replace("timeout: 90}", "timeout: 90, vision: off}")
    done, llm = (
        run(tmp_path, site, "--vision", "off", "--only", "home")
        if said_by == "flag"
        else run(tmp_path, site, "--only", "home", manifest=manifest)
    )
    assert done.exit_code == 0, done.stdout + done.stderr
    assert llm.requests and not any(has_image(r) for r in llm.requests)
    assert not [c for c in llm.calls if c["kind"] == "refused"] and done.results["warnings"] == []


def test_vision_on_sends_images_whatever_the_provider_says_and_its_refusal_is_the_test_s_error(
    tmp_path: Path, site: DemoSite
) -> None:
    """What every run did before --vision: each test errored on the refusal (the provider's message named)."""
    done, _ = run(tmp_path, site, "--vision", "on", "--only", "home")
    assert done.exit_code == 1 and done.test("home")["status"] == "errored", done.stdout
    assert "image input is not supported" in done.test("home")["reason"], done.test("home")["reason"]
