"""End to end over every provider's own protocol: the real CLI, each provider's own SDK (or browser-use's own chat
class) doing the HTTP to a scripted server that speaks that provider's wire format. The same agent behaviour gives the
same verdict everywhere, and every answer's tokens are counted, valid or not."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from preview_qa.providers import PROVIDERS, Provider
from tests.conftest import CliRun, scripted_run
from tests.site import DemoSite

pytestmark = pytest.mark.e2e

MANIFEST = """
version: 1
defaults: {max_steps: 4, timeout: 120, start: /product}
tests:
  - {name: valid, task: "[valid] Read the price.", expect: {text: ["$19.99"]}, judge: true}
  - {name: no structured output, task: "[prose] Read the price."}
  - {name: provider down, task: "[down] Read the price.", max_steps: 2}  # each step's call tried 3 times, with backoff
"""
SCENARIOS = [
    {
        "name": "valid",
        "match": "[valid]",
        "turns": [{"done": {"status": "pass", "reason": "The price is $19.99."}}],
        "judge": {"verdict": True},
    },
    {"name": "prose", "match": "[prose]", "turns": [{"raw": "I think it passed!"}]},  # Anthropic: a text block and no tool call
    {"name": "down", "match": "[down]", "turns": [{"http_status": 500}]},  # every try, retries included
]


@pytest.fixture(scope="module", params=PROVIDERS)
def provider_run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, site: DemoSite) -> Iterator[CliRun]:
    provider: Provider = request.param
    with scripted_run(
        tmp_path_factory.mktemp(provider), site, MANIFEST, SCENARIOS, "--concurrency", "3", provider=provider
    ) as run:
        yield run


def test_a_valid_run_passes_judged_over_the_same_protocol(provider_run: CliRun) -> None:
    valid = provider_run.test("valid")
    assert valid["status"] == "passed", valid
    assert provider_run.llm is not None
    asked = [c["kind"] for c in provider_run.llm.calls if c["scenario"] == "valid"]
    assert asked == ["agent", "judge"]
    assert [c for c in provider_run.llm.calls if c["kind"] == "refused"] == []  # every request was the provider's own


def test_an_answer_without_structured_output_fails_as_invalid_output(provider_run: CliRun) -> None:
    prose = provider_run.test("no structured output")
    assert prose["status"] == "failed", prose
    assert prose["reason"].startswith("the agent's output was invalid and it never reported a verdict: "), prose


def test_a_provider_answering_http_500_errors_with_its_own_error(provider_run: CliRun) -> None:
    down = provider_run.test("provider down")
    assert down["status"] == "errored", down
    assert down["reason"].startswith("LLM provider error: HTTP 500: "), down
    assert "scripted HTTP 500" in down["reason"]  # the provider's own message, from its own error body
    assert down["usage"]["total_tokens"] == 0
    assert provider_run.llm is not None
    tries = 1 if provider_run.llm.wire.provider == "ollama" else 3  # 2 retries by the client; Ollama's has none
    failed = [c for c in provider_run.llm.calls if c["scenario"] == "down" and c["status"] == 500]
    assert len(failed) == tries * down["usage"]["llm_calls"]


def test_every_answered_call_counts_its_tokens(provider_run: CliRun) -> None:
    for name in ("valid", "no structured output"):
        usage = provider_run.test(name)["usage"]
        assert usage["prompt_tokens"] > 0 and usage["completion_tokens"] > 0, (name, usage)
        assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    assert provider_run.exit_code == 1, provider_run.stderr[-2000:]
    assert "Traceback" not in provider_run.stderr
