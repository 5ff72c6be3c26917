"""Tokens of every answered LLM call, read from the provider's own HTTP answer (valid output or not), and their cost."""

from __future__ import annotations

import json
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import urlsplit

from preview_qa.engine.pricing import Price
from preview_qa.verdict.agent_run import UNSUPPORTED


class HttpAnswer(Protocol):
    """An httpx (Ollama's SDK) or httpx2 (OpenAI's and Anthropic's) response: the same interface, two classes."""

    status_code: int
    headers: MutableMapping[str, str]
    request: Any  # the request it answers: its method and URL

    @property
    def content(self) -> bytes: ...

    async def aread(self) -> bytes: ...


@dataclass
class TokenMeter:
    """Counts the tokens the provider says each answer used. It hears every provider's answers themselves (a hook on the
    SDK's HTTP client; the browser-use cloud's parsed answers): browser-use drops the usage of an answer it cannot
    parse, yet the provider bills it."""

    price: Price | None
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    answers: int = 0  # complete HTTP 200 answers heard: a call that got one was answered, whatever its content
    requests: int = 0  # HTTP answers of any status heard (the SDK's retries each one)
    last_request: str = ""  # the last one's method and path: what a 404 was the answer to

    def add(self, input_tokens: int, output_tokens: int) -> None:
        self.input_tokens += input_tokens
        self.output_tokens += output_tokens
        if self.price is not None:
            self.cost_usd += self.price.cost(input_tokens, output_tokens)

    @property
    def cost(self) -> float | None:
        return self.cost_usd if self.price is not None else None

    async def heard(self, response: HttpAnswer) -> None:
        """httpx's response hook: the body is read here (the SDK then reads the same bytes from httpx's buffer)."""
        self.requests += 1
        self.last_request = f"{response.request.method} {urlsplit(str(response.request.url)).path}"
        if response.status_code >= 500:
            await response.aread()
            if UNSUPPORTED.search(response.content.decode("utf-8", "replace")):
                # the server says the request itself is one it does not take: the same again would be refused the same
                # way, so the SDK (OpenAI's, Anthropic's: they obey this header) does not ask again
                response.headers["x-should-retry"] = "false"
            return
        if response.status_code != 200 or "json" not in response.headers.get("content-type", ""):
            return
        await response.aread()
        try:
            body = json.loads(response.content)
        except ValueError:
            body = None
        self.answered(body)

    def answered(self, body: Any) -> None:
        """One complete answer heard, `body` its parsed JSON (None if it was not JSON): counted, its tokens added."""
        self.answers += 1
        found = tokens_in(body)
        if found is not None:
            self.add(*found)

    def event_hooks(self) -> dict[str, list[Any]]:
        """httpx's `event_hooks` for an SDK's HTTP client: every answer is heard."""
        return {"response": [self.heard]}


def tokens_in(body: Any) -> tuple[int, int] | None:
    """(input, output) tokens from one answer's body, in each provider's own fields; None if it names none."""
    if not isinstance(body, Mapping):
        return None
    usage = body.get("usage")
    if isinstance(usage, Mapping):
        if "prompt_tokens" in usage:  # OpenAI chat, Azure OpenAI, OpenAI-compatible servers
            return _int(usage.get("prompt_tokens")), _int(usage.get("completion_tokens"))
        if "input_tokens" in usage:  # Anthropic Messages: cached input is billed input too
            return (
                _int(usage.get("input_tokens"))
                + _int(usage.get("cache_creation_input_tokens"))
                + _int(usage.get("cache_read_input_tokens"))
            ), _int(usage.get("output_tokens"))
    meta = body.get("usageMetadata")
    if isinstance(meta, Mapping):  # Gemini generateContent: thinking is billed as output
        return _int(meta.get("promptTokenCount")), _int(meta.get("candidatesTokenCount")) + _int(meta.get("thoughtsTokenCount"))
    if "prompt_eval_count" in body or "eval_count" in body:  # Ollama /api/chat
        return _int(body.get("prompt_eval_count")), _int(body.get("eval_count"))
    return None


def _int(value: Any) -> int:
    return value if isinstance(value, int) and value > 0 else 0
