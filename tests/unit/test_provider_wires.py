"""Every provider's own wire format, played by the scripted LLM to that provider's own SDK (through browser-use's chat
class and ours): an answer without the structured output is invalid output everywhere and its tokens count; a request
the real provider would refuse is refused."""

from __future__ import annotations

import asyncio
import ssl
from typing import Any

import httpx
import pytest
from pydantic import BaseModel

from preview_qa.agent.adapter.llm import RecordingLLM, make_llm
from preview_qa.demo.scripted_llm import ScriptedLLM
from preview_qa.demo.wire import WIRES
from preview_qa.providers import DEFAULT_MODELS, PROVIDERS, LLMSettings, Provider
from preview_qa.secrets.redact import Redactor

PROSE = "I think it passed!"
SCENARIOS = [
    {"name": "valid", "match": "[valid]", "turns": [{"done": {"status": "pass", "reason": "shown"}}]},
    {"name": "prose", "match": "[prose]", "turns": [{"raw": PROSE}]},
]


class Report(BaseModel):
    status: str
    reason: str


def _ask(provider: Provider, url: str, tag: str) -> tuple[RecordingLLM, Any]:
    from browser_use.agent.views import AgentOutput
    from browser_use.llm.messages import SystemMessage, UserMessage
    from browser_use.tools.service import Tools

    output = AgentOutput.type_with_custom_actions(Tools(output_model=Report).registry.create_action_model())
    made = make_llm(LLMSettings(provider, DEFAULT_MODELS[provider], "k", url))
    llm = RecordingLLM(made.chat, Redactor({}), meter=made.meter)
    messages = [SystemMessage(content="You are an agent."), UserMessage(content=f"<user_request>{tag}</user_request>")]
    try:
        return llm, asyncio.run(llm.ainvoke(messages, output)).completion
    except Exception as e:  # browser-use's own error for an unusable answer, which differs by chat class
        return llm, e


def test_every_provider_has_its_wire_format() -> None:
    assert sorted(WIRES) == sorted(PROVIDERS)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_valid_answer_is_parsed_and_an_answer_without_structured_output_is_invalid_output(provider: Provider) -> None:
    with ScriptedLLM(SCENARIOS, provider=provider) as server:
        valid, completion = _ask(provider, server.url, "[valid]")
        prose, _ = _ask(provider, server.url, "[prose]")
    assert completion.action[0].model_dump(exclude_none=True)["done"]["data"] == {"status": "pass", "reason": "shown"}
    assert valid.faults == [] and valid.usage().prompt_tokens > 0
    assert [(f.kind, f.status) for f in prose.faults] == [("invalid_output", None)], prose.faults
    used = prose.usage()  # the answer was billed: its tokens count although browser-use could not use it
    assert (used.llm_calls, used.completion_tokens) == (1, len(PROSE) // 4) and used.prompt_tokens > 0
    assert [c["status"] for c in server.calls] == [200, 200]


def _post(server: ScriptedLLM, path: str, headers: dict[str, str]) -> httpx.Response:
    return httpx.post(server.url + path, json={"model": "m", "messages": [], "max_tokens": 1}, headers=headers)


@pytest.mark.parametrize(
    ("provider", "path", "headers", "status", "error"),
    [
        ("azure", "/openai/deployments/qa/chat/completions", {"api-key": "k"}, 400, "api-version"),
        ("azure", "/openai/deployments/qa/chat/completions?api-version=2024-12-01-preview", {}, 401, "api-key"),
        ("anthropic", "/v1/messages", {"x-api-key": "k"}, 400, "anthropic-version"),
        ("google", "/v1/models/m:generateContent", {"x-goog-api-key": "k"}, 404, "was not found"),
        ("ollama", "/api/generate", {}, 404, "not found"),
        ("browser-use", "/v1/chat/completions", {}, 401, "Not authenticated"),
    ],
)
def test_a_request_the_real_provider_would_refuse_is_refused_in_its_own_words(
    provider: Provider, path: str, headers: dict[str, str], status: int, error: str
) -> None:
    with ScriptedLLM(SCENARIOS, provider=provider) as server:
        answer = _post(server, path, headers)
    assert answer.status_code == status and error in answer.text
    assert server.calls == [{"scenario": None, "kind": "refused", "step": None, "status": status, "path": path}]


@pytest.mark.parametrize("provider", ["openai", "anthropic", "azure"])
def test_each_tests_client_verifies_certificates_with_the_tls_settings_made_once(provider: Provider) -> None:
    """Every test has a client of its own (its meter's hooks); the CAs they trust are loaded once a run, not once a test,
    and certificates are still verified."""
    contexts = [make_llm(LLMSettings(provider, "m", "k", "https://llm.test")).chat.http_client for _ in range(2)]
    first, second = (client._transport._pool._ssl_context for client in contexts)  # type: ignore[union-attr]
    assert first is second
    assert (first.verify_mode, first.check_hostname) == (ssl.CERT_REQUIRED, True)
