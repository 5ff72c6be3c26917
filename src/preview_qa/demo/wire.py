"""Each LLM provider's wire format, for the scripted LLM: its route, its request read as an OpenAI chat body, its
answers and its errors.

The scripted LLM plays one turn script for every provider: a provider's request is read into the OpenAI chat form the
script understands (its messages, and the JSON schema the answer must follow, `$ref`s resolved), and the turn's output
goes back in that provider's own answer, with its own usage fields. A request the real provider would refuse (wrong
path, no API version, no key header) is refused the same way, so a client that drifts from the protocol fails loudly.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import parse_qs, urlsplit

Body = dict[str, Any]


class WireError(Exception):
    """A request the real provider would refuse: answered with `status` and the provider's own error body."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Output:
    """One scripted answer: the model's output text, and how many tokens the provider says it used."""

    text: str  # a structured answer's JSON, or prose
    structured: bool  # the turn is the structured output asked for (not prose, as a `raw` turn is)
    prompt_tokens: int
    completion_tokens: int


class Wire(Protocol):
    """One provider's protocol: where its base URL ends, how its requests read and how its answers look."""

    provider: str  # the provider's name in providers.py
    url_suffix: str  # what the base URL its client is given ends in

    def chat(self, path: str, headers: Mapping[str, str], body: Body) -> Body:
        """The request as an OpenAI chat body; WireError if the real provider would refuse it."""
        ...

    def answer(self, output: Output, body: Body) -> Body:
        """The provider's answer holding `output`, to the request `body`."""
        ...

    def error(self, status: int, message: str) -> Body:
        """The provider's error body for an HTTP `status`."""
        ...


class OpenAIWire:
    """OpenAI chat completions: POST <base>/chat/completions; the base URL ends in /v1."""

    provider = "openai"
    url_suffix = "/v1"

    def chat(self, path: str, headers: Mapping[str, str], body: Body) -> Body:
        if not urlsplit(path).path.endswith("/chat/completions"):
            raise WireError(404, f"unknown path {path}")
        return body

    def answer(self, output: Output, body: Body) -> Body:
        prompt, completion = output.prompt_tokens, output.completion_tokens
        return {
            "id": f"chatcmpl-scripted-{time.monotonic_ns()}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": str(body.get("model") or "scripted"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": output.text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
        }

    def error(self, status: int, message: str) -> Body:
        kind = "rate_limit_error" if status == 429 else "server_error" if status >= 500 else "invalid_request_error"
        return {"error": {"message": message, "type": kind, "param": None, "code": str(status)}}


class AzureWire(OpenAIWire):
    """Azure OpenAI: POST /openai/deployments/<deployment>/chat/completions?api-version=..., key in `api-key`."""

    provider = "azure"
    url_suffix = ""
    _PATH = re.compile(r"/openai/deployments/([^/]+)/chat/completions")

    def chat(self, path: str, headers: Mapping[str, str], body: Body) -> Body:
        found, query = _route(self._PATH, path, "Resource not found: {path}")
        if not query.get("api-version"):
            raise WireError(400, "Missing required query parameter: api-version")
        if not headers.get("api-key") and not headers.get("authorization"):
            raise WireError(401, "Access denied due to missing subscription key (the api-key header)")
        return {**body, "model": body.get("model") or found.group(1)}


class AnthropicWire:
    """Anthropic Messages: POST /v1/messages; the structured output comes back as the forced tool's tool_use block."""

    provider = "anthropic"
    url_suffix = ""

    def chat(self, path: str, headers: Mapping[str, str], body: Body) -> Body:
        if urlsplit(path).path != "/v1/messages":
            raise WireError(404, f"Not found: {path}")
        if not headers.get("anthropic-version"):
            raise WireError(400, "anthropic-version: header is required")
        if not headers.get("x-api-key") and not headers.get("authorization"):
            raise WireError(401, "x-api-key header is required")
        if not isinstance(body.get("max_tokens"), int):
            raise WireError(400, "max_tokens: Field required")
        system = body.get("system")
        messages = [{"role": "system", "content": system}] if system else []
        schema = None
        if (tool := _forced_tool(body)) is not None:
            schema = tool.get("input_schema")
        return _chat_body(body.get("model"), [*messages, *(body.get("messages") or [])], schema)

    def answer(self, output: Output, body: Body) -> Body:
        tool, value = _forced_tool(body), _json_object(output)
        if tool is not None and value is not None:
            content = [{"type": "tool_use", "id": f"toolu_{time.monotonic_ns()}", "name": tool["name"], "input": value}]
            stop = "tool_use"
        else:
            content, stop = [{"type": "text", "text": output.text}], "end_turn"
        return {
            "id": f"msg_scripted_{time.monotonic_ns()}",
            "type": "message",
            "role": "assistant",
            "model": str(body.get("model") or "scripted"),
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": output.prompt_tokens, "output_tokens": output.completion_tokens},
        }

    def error(self, status: int, message: str) -> Body:
        kinds = {400: "invalid_request_error", 401: "authentication_error", 404: "not_found_error", 429: "rate_limit_error"}
        return {"type": "error", "error": {"type": kinds.get(status, "api_error"), "message": message}}


class GeminiWire:
    """Gemini: POST /v1beta/models/<model>:generateContent; JSON output as the text of the first candidate's part."""

    provider = "google"
    url_suffix = ""
    _PATH = re.compile(r"/v1beta/models/([^/:]+):generateContent")

    def chat(self, path: str, headers: Mapping[str, str], body: Body) -> Body:
        found, query = _route(self._PATH, path, "The requested URL {path} was not found on this server.")
        if not headers.get("x-goog-api-key") and not query.get("key"):
            raise WireError(403, "Method doesn't allow unregistered callers. Please use an API key.")
        config = body.get("generationConfig") or {}
        system = body.get("systemInstruction")
        messages = [{"role": "system", "content": system.get("parts")}] if isinstance(system, dict) else []
        for turn in body.get("contents") or []:
            role = "assistant" if turn.get("role") == "model" else "user"
            messages.append({"role": role, "content": turn.get("parts") or []})
        schema = None
        if config.get("responseMimeType") == "application/json":
            schema = config.get("responseSchema") or config.get("responseJsonSchema")
        return _chat_body(found.group(1), messages, schema)

    def answer(self, output: Output, body: Body) -> Body:
        prompt, completion = output.prompt_tokens, output.completion_tokens
        return {
            "candidates": [{"content": {"role": "model", "parts": [{"text": output.text}]}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {
                "promptTokenCount": prompt,
                "candidatesTokenCount": completion,
                "totalTokenCount": prompt + completion,
            },
            "modelVersion": "scripted",
        }

    def error(self, status: int, message: str) -> Body:
        names = {400: "INVALID_ARGUMENT", 403: "PERMISSION_DENIED", 404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED"}
        names |= {503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED"}
        return {"error": {"code": status, "message": message, "status": names.get(status, "INTERNAL")}}


class OllamaWire:
    """Ollama: POST /api/chat, not streamed, the JSON schema in `format`; tokens in prompt_eval_count/eval_count."""

    provider = "ollama"
    url_suffix = ""

    def chat(self, path: str, headers: Mapping[str, str], body: Body) -> Body:
        if urlsplit(path).path != "/api/chat":
            raise WireError(404, "404 page not found")
        if body.get("stream") is not False:
            raise WireError(400, "the scripted server answers only `stream: false` requests")
        schema = body.get("format")
        return _chat_body(body.get("model"), body.get("messages") or [], schema if isinstance(schema, dict) else None)

    def answer(self, output: Output, body: Body) -> Body:
        return {
            "model": str(body.get("model") or "scripted"),
            "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "message": {"role": "assistant", "content": output.text},
            "done": True,
            "done_reason": "stop",
            "prompt_eval_count": output.prompt_tokens,
            "eval_count": output.completion_tokens,
        }

    def error(self, status: int, message: str) -> Body:
        return {"error": message}


class BrowserUseCloudWire:
    """The browser-use cloud's chat API: POST /v1/chat/completions with `output_format` (a JSON schema); the answer's
    `completion` is the structured output itself, as JSON, beside `usage`."""

    provider = "browser-use"
    url_suffix = ""

    def chat(self, path: str, headers: Mapping[str, str], body: Body) -> Body:
        if urlsplit(path).path != "/v1/chat/completions":
            raise WireError(404, "Not Found")
        if not headers.get("authorization", "").startswith("Bearer "):
            raise WireError(401, "Not authenticated")
        schema = body.get("output_format")
        return _chat_body(body.get("model"), body.get("messages") or [], schema if isinstance(schema, dict) else None)

    def answer(self, output: Output, body: Body) -> Body:
        prompt, completion = output.prompt_tokens, output.completion_tokens
        usage: Body = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
        usage |= {"prompt_cached_tokens": None, "prompt_cache_creation_tokens": None, "prompt_image_tokens": None}
        return {"completion": json.loads(output.text) if output.structured else output.text, "usage": usage}

    def error(self, status: int, message: str) -> Body:
        return {"detail": message}


WIRES: dict[str, Wire] = {
    w.provider: w for w in (OpenAIWire(), AnthropicWire(), GeminiWire(), AzureWire(), OllamaWire(), BrowserUseCloudWire())
}


def _route(pattern: re.Pattern[str], path: str, not_found: str) -> tuple[re.Match[str], dict[str, list[str]]]:
    """The match of `pattern` on the request's path, and its query; a 404 saying `not_found` if it does not match."""
    url = urlsplit(path)
    if not (found := pattern.fullmatch(url.path)):
        raise WireError(404, not_found.format(path=url.path))
    return found, parse_qs(url.query)


def _chat_body(model: Any, messages: list[Any], schema: Any) -> Body:
    body: Body = {"model": str(model or "scripted"), "messages": messages}
    if isinstance(schema, dict):
        body["response_format"] = {"type": "json_schema", "json_schema": {"schema": plain_schema(schema)}}
    return body


def plain_schema(schema: Body) -> Body:
    """`schema` with every `$ref` replaced by its definition and Gemini's `any_of` read as `anyOf`."""
    defs = schema.get("$defs") or {}

    def plain(value: Any) -> Any:
        if isinstance(value, list):
            return [plain(v) for v in value]
        if not isinstance(value, dict):
            return value
        if isinstance(ref := value.get("$ref"), str) and ref.startswith("#/$defs/"):
            return plain({**defs.get(ref.removeprefix("#/$defs/"), {}), **{k: v for k, v in value.items() if k != "$ref"}})
        return {("anyOf" if k == "any_of" else k): plain(v) for k, v in value.items() if k != "$defs"}

    out: Body = plain(schema)
    return out


def _forced_tool(body: Body) -> Body | None:
    """The tool an Anthropic request forces (`tool_choice: {type: tool, name}`), if it names one of its tools."""
    choice = body.get("tool_choice") or {}
    if choice.get("type") != "tool":
        return None
    return next((t for t in body.get("tools") or [] if isinstance(t, dict) and t.get("name") == choice.get("name")), None)


def _json_object(output: Output) -> Body | None:
    """A structured output that is a JSON object (a tool's input can be nothing else); None for prose or other JSON."""
    if not output.structured:
        return None
    value = json.loads(output.text)
    return value if isinstance(value, dict) else None
