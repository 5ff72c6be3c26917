"""The bounds a user sets on each LLM call: how long it may take (llm_timeout: longer for a model served here) and how
much it may answer (--max-output-tokens, sent in each provider's own field)."""

from __future__ import annotations

import pytest

from preview_qa.agent.adapter.build import llm_timeout
from preview_qa.agent.adapter.llm import make_llm
from preview_qa.providers import LLMSettings, is_local
from tests.builders import spec


@pytest.mark.parametrize(
    ("timeout", "given", "local", "bound"),
    [
        (300, None, False, 50),  # hosted: a sixth of the test's timeout, 75 s at most
        (900, None, False, 75),
        (300, None, True, 150),  # served here: half, 600 s at most
        (3600, None, True, 600),
        (600, 240, False, 240),  # the user's bound, whoever serves the model
        (60, 240, True, 60),  # never past the test's own timeout
    ],
)
def test_each_call_s_bound(timeout: float, given: float | None, local: bool, bound: int) -> None:
    assert llm_timeout(spec("t", timeout=timeout, llm_timeout=given), local) == bound


@pytest.mark.parametrize(
    ("provider", "url", "local"),
    [
        ("ollama", "https://ollama.example.com", True),
        ("openai", "http://127.0.0.1:8080/v1", True),
        ("openai", "http://10.1.2.3:8000/v1", True),
        ("openai", "http://gpu-box.local:1234/v1", True),
        ("openai", "http://localhost:11434/v1", True),
        ("openai", None, False),
        ("openai", "https://api.together.xyz/v1", False),
        ("anthropic", "https://8.8.8.8", False),
    ],
)
def test_a_model_served_on_this_machine_or_a_private_network_is_local(provider: str, url: str | None, local: bool) -> None:
    assert is_local(provider, url) is local


@pytest.mark.parametrize(
    ("provider", "field", "value"),
    [
        ("openai", "max_completion_tokens", 16000),
        ("anthropic", "max_tokens", 16000),
        ("ollama", "ollama_options", {"num_predict": 16000}),
    ],
)
def test_max_output_tokens_goes_in_each_provider_s_own_field(provider: str, field: str, value: object) -> None:
    settings = LLMSettings(provider, "m", "k", "http://127.0.0.1:9", max_output_tokens=16000)  # type: ignore[arg-type]
    assert getattr(make_llm(settings).chat, field) == value
    assert make_llm(LLMSettings("openai", "m", "k", None)).chat.max_completion_tokens == 4096  # browser-use's
