"""The LLM providers we support: their names, default models and key variables, and a provider's settings resolved."""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, get_args
from urllib.parse import urlsplit

from preview_qa.errors import LLMConfigError

Provider = Literal["openai", "anthropic", "google", "azure", "ollama", "browser-use"]
PROVIDERS: tuple[Provider, ...] = get_args(Provider)
DEFAULT_MODELS: dict[Provider, str] = {
    "openai": "gpt-4.1-mini",
    "anthropic": "claude-sonnet-4-5",
    "google": "gemini-2.5-flash",
    "azure": "gpt-4.1-mini",
    "ollama": "qwen2.5:7b",
    "browser-use": "bu-2-0",
}
API_KEY_ENV: dict[Provider, tuple[str, ...]] = {
    "openai": ("OPENAI_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY",),
    "google": ("GOOGLE_API_KEY", "GEMINI_API_KEY"),
    "azure": ("AZURE_OPENAI_API_KEY", "AZURE_OPENAI_KEY"),
    "ollama": (),
    "browser-use": ("BROWSER_USE_API_KEY",),
}
BASE_URL_ENV: dict[Provider, str] = {"openai": "OPENAI_BASE_URL", "azure": "AZURE_OPENAI_ENDPOINT", "ollama": "OLLAMA_HOST"}


@dataclass(frozen=True)
class LLMSettings:
    """Everything needed to build one provider's chat model, resolved from flags and the environment."""

    provider: Provider
    model: str
    api_key: str | None
    base_url: str | None
    price_per_mtok: tuple[float, float] | None = None  # --price-per-mtok: USD per million input, output tokens
    max_output_tokens: int | None = None  # --max-output-tokens; None: browser-use's own (4,096 for OpenAI's protocol)


def default_model(provider: str, model: str | None = None) -> str:
    """`model`, else the provider's default (empty for a provider we do not know)."""
    return model or DEFAULT_MODELS.get(provider, "")  # type: ignore[call-overload]


def resolve(
    provider: str, model: str | None, api_key: str | None, base_url: str | None, env: Mapping[str, str], key_needed: bool = True
) -> LLMSettings:
    """The provider's settings; the key comes from the argument or the provider's usual variable (refused when missing,
    unless `key_needed` is false: a run that calls no LLM)."""
    if provider not in PROVIDERS:
        raise LLMConfigError(f"unknown provider '{provider}'; choose one of: {', '.join(PROVIDERS)}.")
    name: Provider = provider
    key = api_key or next((env[v] for v in API_KEY_ENV[name] if env.get(v)), None)
    base_url = base_url or (env.get(BASE_URL_ENV[name]) if name in BASE_URL_ENV else None) or None
    if name == "openai" and not key and base_url:
        key = "not-needed"  # local OpenAI-compatible servers usually ignore the key
    if API_KEY_ENV[name] and not key and key_needed:
        names = " or ".join(API_KEY_ENV[name])
        raise LLMConfigError(f"no API key for provider '{provider}'; set {names} or pass --api-key.")
    if name == "azure" and not base_url:
        raise LLMConfigError("provider 'azure' needs an endpoint; set AZURE_OPENAI_ENDPOINT or pass --llm-base-url.")
    return LLMSettings(provider=name, model=default_model(name, model), api_key=key, base_url=base_url)


def is_local(provider: str, base_url: str | None) -> bool:
    """Whether the model is served on this machine or a private network (Ollama, or an endpoint on a loopback, private
    or .local host): it answers slower than a hosted provider, on a CPU or a shared GPU."""
    if provider == "ollama":
        return True
    host = (urlsplit(base_url).hostname or "") if base_url else ""
    if host == "localhost" or host.endswith((".local", ".localhost", ".internal")):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_link_local
