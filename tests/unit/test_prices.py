"""Cost budgets that hold: prices ship with the package (no download), the user can override them, a budget on a model
of unknown price is refused before the run (exit 2), and every answered LLM call's tokens count, valid or not."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from pytest_httpserver import HTTPServer

from preview_qa import cli
from preview_qa.agent.adapter.llm import RecordingLLM, make_llm
from preview_qa.agent.adapter.token_meter import tokens_in
from preview_qa.engine.pricing import budget_exceeded, find_price, parse_override
from preview_qa.providers import DEFAULT_MODELS, LLMSettings
from preview_qa.results import Usage
from preview_qa.secrets.redact import Redactor
from tests.builders import spec


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any HTTP request fails, as it would offline: the prices must not need one."""

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a price lookup tried to use the network")

    import httpx2  # the OpenAI and Anthropic SDKs' client, and genai-prices' own updater's

    for lib in (httpx, httpx2):
        monkeypatch.setattr(lib.Client, "send", refuse)
        monkeypatch.setattr(lib.AsyncClient, "send", refuse)


@pytest.mark.parametrize("provider", sorted(DEFAULT_MODELS))
def test_every_providers_default_model_has_a_price_offline(provider: str, no_network: None) -> None:
    price = find_price(provider, DEFAULT_MODELS[provider])  # type: ignore[index]
    assert price is not None
    assert price.cost(1000, 1000) >= 0


def test_bundled_prices_are_the_providers_own_and_an_override_replaces_them(no_network: None) -> None:
    mini = find_price("openai", "gpt-4.1-mini")
    assert mini is not None and mini.cost(1_000_000, 1_000_000) == pytest.approx(0.4 + 1.6)
    assert "genai-prices" in mini.source
    overridden = find_price("openai", "gpt-4.1-mini", (1.0, 2.0))
    assert overridden is not None and overridden.cost(500_000, 250_000) == pytest.approx(1.0)
    assert find_price("openai", "my-own-finetune") is None
    assert find_price("ollama", "anything:7b") is not None  # runs locally: free, a budget on it holds at $0


def test_a_price_override_must_be_two_non_negative_numbers() -> None:
    assert parse_override(" 0.4, 1.6 ") == (0.4, 1.6)
    for bad in ("0.4", "a,b", "1,2,3", "-1,2"):
        with pytest.raises(ValueError, match="--price-per-mtok"):
            parse_override(bad)


def test_a_cost_budget_whose_cost_cannot_be_known_stops_the_test_instead_of_being_ignored() -> None:
    budget = spec(max_cost_usd=0.01)
    assert budget_exceeded(budget, Usage(total_tokens=10, cost_usd=0.002)) is None
    assert budget_exceeded(budget, Usage(total_tokens=10, cost_usd=0.02)) == "budget exceeded: max_cost_usd=0.01 (spent $0.0200)"
    assert "price is unknown" in (budget_exceeded(budget, Usage(total_tokens=10, cost_usd=None)) or "")
    assert budget_exceeded(spec(max_tokens=5), Usage(total_tokens=6)) == "budget exceeded: max_tokens=5 (used 6)"


@pytest.mark.parametrize(
    ("body", "tokens"),
    [
        ({"usage": {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14}}, (11, 3)),  # OpenAI, Azure, cloud
        ({"usage": {"input_tokens": 11, "output_tokens": 3, "cache_read_input_tokens": 5}}, (16, 3)),  # Anthropic
        ({"usageMetadata": {"promptTokenCount": 11, "candidatesTokenCount": 3, "thoughtsTokenCount": 2}}, (11, 5)),  # Gemini
        ({"message": {}, "prompt_eval_count": 11, "eval_count": 3}, (11, 3)),  # Ollama
        ({"choices": []}, None),
    ],
)
def test_each_providers_own_usage_fields_are_read(body: dict[str, Any], tokens: tuple[int, int] | None) -> None:
    assert tokens_in(body) == tokens


def _completion(content: str) -> dict[str, Any]:
    return {
        "id": "x",
        "object": "chat.completion",
        "created": 0,
        "model": "gpt-4.1-mini",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1000, "completion_tokens": 200, "total_tokens": 1200},
    }


def test_an_answer_that_is_not_valid_output_still_counts_its_tokens_and_cost(httpserver: HTTPServer) -> None:
    from browser_use.agent.views import AgentOutput
    from browser_use.llm.messages import UserMessage

    httpserver.expect_request("/v1/chat/completions").respond_with_json(_completion("I think it passed!"))
    made = make_llm(LLMSettings("openai", "gpt-4.1-mini", "k", httpserver.url_for("/v1")))
    llm = RecordingLLM(made.chat, Redactor({}), meter=made.meter)
    with pytest.raises(Exception):  # noqa: B017  # browser-use's own error for unparsable output
        asyncio.run(llm.ainvoke([UserMessage(content="hi")], AgentOutput))
    assert [f.kind for f in llm.faults] == ["invalid_output"]
    used = llm.usage()
    assert (used.llm_calls, used.prompt_tokens, used.completion_tokens, used.total_tokens) == (1, 1000, 200, 1200)
    assert used.cost_usd == pytest.approx((1000 * 0.4 + 200 * 1.6) / 1_000_000)


def test_a_cost_budget_on_a_model_of_unknown_price_is_refused_before_the_run(tmp_path: Path) -> None:
    manifest = tmp_path / "qa.yml"
    manifest.write_text("version: 1\ntests:\n  - name: a\n    task: do it\n    max_cost_usd: 0.5\n")
    args = [
        "run",
        str(manifest),
        "--base-url",
        "https://pr-7.example.com",
        "--llm-base-url",
        "http://127.0.0.1:9/v1",
        "--model",
        "my-own-finetune",
        "--out",
        str(tmp_path / "out"),
    ]
    refused = CliRunner().invoke(cli.main, args)
    assert refused.exit_code == 2, refused.output
    message = refused.output.strip().splitlines()[-1]
    assert f"{manifest}:5" in message and "'my-own-finetune'" in message and "--price-per-mtok" in message
    flag = CliRunner().invoke(cli.main, [*args[:-2], "--run-max-cost-usd", "1", "--out", str(tmp_path / "out")])
    assert flag.exit_code == 2 and "--run-max-cost-usd cannot be enforced" in flag.output
    assert not (tmp_path / "out").exists()  # refused before anything ran or was written


def test_the_price_override_is_what_the_run_prices_with_and_lets_the_budget_through() -> None:
    from preview_qa import app
    from preview_qa.config import RunConfig
    from preview_qa.manifest.models import Manifest

    manifest = Manifest(version=1, tests=[spec(max_cost_usd=0.5)])
    unknown = LLMSettings("openai", "my-own-finetune", "k", "http://127.0.0.1:9/v1")
    config = RunConfig(manifest=Path("qa.yml"), base_url="http://x", price_per_mtok=(0.5, 2.0))
    assert app.priced(unknown, manifest, config).price_per_mtok == (0.5, 2.0)
    meter = make_llm(app.priced(unknown, manifest, config)).meter
    meter.add(1_000_000, 1_000_000)
    assert meter.cost == pytest.approx(2.5)


def test_an_anthropic_http_500_is_a_provider_fault_with_its_status(httpserver: HTTPServer) -> None:
    from browser_use.agent.views import AgentOutput
    from browser_use.llm.messages import UserMessage

    httpserver.expect_request("/v1/messages").respond_with_json(
        {"type": "error", "error": {"type": "api_error", "message": "scripted HTTP 500"}}, status=500
    )
    made = make_llm(LLMSettings("anthropic", "claude-sonnet-4-5", "k", httpserver.url_for("")))
    made.chat.max_retries = 0
    llm = RecordingLLM(made.chat, Redactor({}), meter=made.meter)
    with pytest.raises(Exception):  # noqa: B017
        asyncio.run(llm.ainvoke([UserMessage(content="hi")], AgentOutput))
    assert [(f.kind, f.status) for f in llm.faults] == [("provider", 500)]
    assert llm.usage().total_tokens == 0


EXACT_ONLY = """version: 1
tests:
  - name: sign up
    start: /signup
    max_cost_usd: 0.01
    steps:
      - {fill: {label: Email, value: ada@example.com}}
      - {click: {role: button, name: Sign up}}
"""


@pytest.mark.parametrize("budget", [[], ["--max-cost-usd", "0.5"], ["--run-max-cost-usd", "1"]])
def test_a_budget_nothing_can_spend_is_not_refused_on_a_model_of_unknown_price(tmp_path: Path, budget: list[str]) -> None:
    """Exact steps call no LLM (#65, 10): their budget holds whatever the model's price; a `do` step could spend."""
    from preview_qa import app
    from preview_qa.config import RunConfig
    from preview_qa.errors import ManifestError, UnpricedBudgetError
    from preview_qa.manifest import loader

    (tmp_path / "qa.yml").write_text(EXACT_ONLY, encoding="utf-8")
    unknown = LLMSettings("openai", "my-own-finetune", "k", "http://127.0.0.1:9/v1")
    flags = {"max_cost_usd": 0.5} if "--max-cost-usd" in budget else {"run_max_cost_usd": 1.0} if budget else {}
    config = RunConfig(manifest=tmp_path / "qa.yml", base_url="http://x", **flags)  # type: ignore[arg-type]
    assert app.priced(unknown, loader.load(tmp_path / "qa.yml"), config).model == "my-own-finetune"
    (tmp_path / "qa.yml").write_text(EXACT_ONLY + "      - {do: Check the welcome mail.}\n", encoding="utf-8")
    with pytest.raises(UnpricedBudgetError if budget else ManifestError, match="cannot be enforced"):
        app.priced(unknown, loader.load(tmp_path / "qa.yml"), config)


def test_a_test_that_made_no_llm_call_is_within_its_cost_budget_whatever_the_price() -> None:
    assert budget_exceeded(spec(max_cost_usd=0.01), Usage()) is None
    assert budget_exceeded(spec(max_cost_usd=0.01), Usage(llm_calls=1, total_tokens=10)) == (
        "budget cannot be enforced: max_cost_usd=0.01 but the model's price is unknown"
    )
