"""LLM providers through browser-use's own chat classes, a wrapper that records every call's outcome by type, and one
structured call outside a test (planning's drafts, issue #39) through that wrapper.

Page text as the model reads it (issue #64): fenced as untrusted data, as the MCP server fences it for coding agents
(mcp/fence.py), so that no page can close the fence and speak as preview-qa. The agent's step message holds the page's
state in browser-use's own sections (agent/prompts.py's AgentMessagePrompt: `<browser_state>`, `<read_state>`); each is
fenced from its opening tag to its last closing tag, so a page that writes a closing tag of its own stays inside, and
every copy of the fence's marker in it is made inert."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import json
import re
import ssl
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from browser_use.agent.views import JudgementResult
from browser_use.llm.base import BaseChatModel
from browser_use.llm.exceptions import ModelOutputTruncatedError, ModelProviderError, ModelRateLimitError
from browser_use.llm.messages import BaseMessage, ContentPartImageParam, ContentPartTextParam, SystemMessage, UserMessage
from pydantic import BaseModel, ValidationError

from preview_qa.agent.adapter.patches import MeteredChatBrowserUse, VerifiedLLM
from preview_qa.agent.adapter.token_meter import TokenMeter
from preview_qa.agent.vision import VisionSwitch, without_images
from preview_qa.engine.pricing import find_price
from preview_qa.providers import LLMSettings
from preview_qa.results import Usage, error_line
from preview_qa.secrets.redact import Redactor
from preview_qa.verdict.agent_run import LLMFault, LLMPurpose, SecondLook

NO_ANSWER = "the provider did not answer in time"
TRUNCATED = "the model's output was truncated at its output limit (raise --max-output-tokens, the action's max-output-tokens)"
# --max-output-tokens: each chat class's own field for what its calls may answer at most (the browser-use cloud sets
# its own); unset, browser-use's defaults hold (4,096 for OpenAI's protocol, 8,192 for Anthropic's)
OUTPUT_LIMIT = {
    "openai": "max_completion_tokens",
    "azure": "max_completion_tokens",
    "anthropic": "max_tokens",
    "google": "max_output_tokens",
    "ollama": "ollama_options",
}
RETRIES = 2  # per LLM call, with the provider SDK's own backoff (honours Retry-After); bounded on purpose


@dataclass
class MeteredChat:
    """A provider's chat model and the meter that hears its answers' token counts."""

    chat: BaseChatModel
    meter: TokenMeter


def make_llm(settings: LLMSettings) -> MeteredChat:
    """browser-use's chat model for the provider settings that `providers.resolve` checked, its HTTP client hooked so
    that every answer's tokens are counted (the browser-use cloud's: its parsed answers, agent/adapter/patches.py)."""
    meter = TokenMeter(find_price(settings.provider, settings.model, settings.price_per_mtok))
    chat = _chat(settings, meter)
    limit, field_name = settings.max_output_tokens, OUTPUT_LIMIT.get(settings.provider)
    if limit is not None and field_name is not None:
        setattr(chat, field_name, {"num_predict": limit} if settings.provider == "ollama" else limit)
    return MeteredChat(chat, meter)


@functools.cache
def _tls(make: Callable[[], ssl.SSLContext]) -> ssl.SSLContext:
    """The TLS settings `make` gives an SDK's default client (the CAs it trusts), made once a run: each test has a client
    of its own (its meter's hooks), and loading the CAs again cost 30 to 60 ms of CPU a test."""
    return make()


def _tls_of_the_sdks() -> ssl.SSLContext:
    """What the OpenAI and Anthropic SDKs' default clients (httpx2, which both depend on) verify with."""
    from httpx2 import create_ssl_context

    return _tls(create_ssl_context)


def _chat(settings: LLMSettings, meter: TokenMeter) -> BaseChatModel:
    provider, model, key, base_url = settings.provider, settings.model, settings.api_key, settings.base_url
    if provider == "openai":
        from browser_use.llm.openai.chat import ChatOpenAI
        from openai import DefaultAsyncHttpxClient

        return ChatOpenAI(
            model=model,
            api_key=key,
            base_url=base_url,
            max_retries=RETRIES,
            http_client=DefaultAsyncHttpxClient(verify=_tls_of_the_sdks(), event_hooks=meter.event_hooks()),
        )
    if provider == "anthropic":
        from anthropic import DefaultAsyncHttpxClient as AnthropicHttpxClient
        from browser_use.llm.anthropic.chat import ChatAnthropic

        return ChatAnthropic(
            model=model,
            api_key=key,
            base_url=base_url,
            max_retries=RETRIES,
            # the SDK's own client (httpx2), which browser-use's annotation (httpx) predates
            http_client=AnthropicHttpxClient(verify=_tls_of_the_sdks(), event_hooks=meter.event_hooks()),  # type: ignore[arg-type]
        )
    if provider == "google":
        return _google(model, key, base_url, meter)
    if provider == "azure":
        from browser_use.llm.azure.chat import ChatAzureOpenAI
        from openai import DefaultAsyncHttpxClient

        return ChatAzureOpenAI(
            model=model,
            api_key=key,
            azure_endpoint=base_url,
            max_retries=RETRIES,
            http_client=DefaultAsyncHttpxClient(verify=_tls_of_the_sdks(), event_hooks=meter.event_hooks()),
        )
    if provider == "ollama":
        from browser_use.llm.ollama.chat import ChatOllama

        return ChatOllama(model=model, host=base_url, client_params={"event_hooks": meter.event_hooks()})
    # its max_retries counts every attempt: 1 + RETRIES, as the other SDKs' retries
    return MeteredChatBrowserUse(on_answer=meter.answered, model=model, api_key=key, base_url=base_url, max_retries=RETRIES + 1)


def _google(model: str, key: str | None, base_url: str | None, meter: TokenMeter) -> BaseChatModel:
    import httpx
    from browser_use.llm.google.chat import ChatGoogle
    from google.genai import types

    options = types.HttpOptions(
        base_url=base_url,
        # a client of our own, hooked, instead of google-genai's default aiohttp session, which takes no hook
        httpx_async_client=httpx.AsyncClient(verify=_tls(httpx.create_ssl_context), event_hooks=meter.event_hooks()),
        retry_options=types.HttpRetryOptions(attempts=RETRIES + 1),  # HTTP errors: retried by the SDK, as the others'
    )
    # max_retries=1: browser-use's own loop would only ask again after an answer it could not parse, which no other
    # provider's chat class does
    return ChatGoogle(model=model, api_key=key, max_retries=1, http_options=options)


@dataclass
class RecordingLLM(VerifiedLLM):
    """Wraps a chat model: scrubs every secret from what it sends, counts calls and records each failure as a typed
    LLMFault (never by reading prose).

    `on_fault` hears of each fault as it happens, so that evidence of an early abort is published before anything
    else can go wrong."""

    inner: BaseChatModel
    redactor: Redactor  # the run's (app.py gathers it): what every request is scrubbed of
    meter: TokenMeter = field(default_factory=lambda: TokenMeter(None))
    on_fault: Callable[[LLMFault], None] | None = None
    on_answer: Callable[[Any], None] | None = None  # hears each answer's parsed completion (a step's full action list)
    faults: list[LLMFault] = field(default_factory=list)
    vision: VisionSwitch | None = None  # the run's: whether screenshots go to the model (None: they do)
    on_vision_off: Callable[[str], None] | None = None  # hears the refusal that turned images off for the run
    no_answer: str = NO_ANSWER  # why a call given up on was: the bound that ran out (agent/adapter/build.py)
    gave_up: LLMFault | None = None  # a refusal every call would get (a 401, a 404...): no call goes out after it
    calls: int = 0
    seconds: float = 0.0  # spent waiting for answers

    @property
    def model(self) -> str:
        return self.inner.model

    @property
    def provider(self) -> str:
        return self.inner.provider

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def model_name(self) -> str:
        return self.inner.model

    def __getattr__(self, item: str) -> Any:
        return getattr(self.inner, item)

    async def ainvoke(self, messages: list[Any], output_format: Any = None, **kwargs: Any) -> Any:
        if self.gave_up is not None:  # the same refusal again, without asking: the test ends on the first one
            raise ModelProviderError(self.gave_up.message, status_code=self.gave_up.status or 502, model=self.model)
        self.calls += 1
        purpose: LLMPurpose = (
            "judge" if output_format is JudgementResult else "second_look" if output_format is SecondLook else "agent"
        )
        started, answers = time.monotonic(), self.meter.answers
        images = self.vision is None or self.vision.sends_images
        refused: str | None = None  # the provider's word that the model takes no images: asked again without them
        try:
            # what the pages show, fenced as untrusted data (below): the judge's own sections too
            sent = scrubbed(fenced_messages(messages), self.redactor)
            response = await self.inner.ainvoke(sent if images else without_images(sent), output_format, **kwargs)
        except ModelProviderError as e:
            fault = classify(e, purpose, answered=self.meter.answers > answers)
            if not (images and self.vision is not None and self.vision.refused(fault.status, fault.message)):
                if fault.status == 404 and self.meter.last_request:  # which path: another protocol's, often
                    fault = dataclasses.replace(fault, message=f"{fault.message} (to {self.meter.last_request})")
                self._record(fault)
                self.gave_up = fault if fault.every_call_gets else None
                raise
            refused = fault.message
        except Exception as e:
            self._record(unusable(e, purpose) if self.meter.answers > answers else provider_fault(e, purpose))
            raise
        except asyncio.CancelledError:
            # browser-use's llm_timeout gave up on a hanging provider (our own deadlines report themselves first)
            self._record(LLMFault(kind="provider", purpose=purpose, status=None, message=self.no_answer))
            raise
        finally:
            self.seconds += time.monotonic() - started
        if refused is not None:
            assert self.vision is not None
            if self.vision.learn(refused) and self.on_vision_off is not None:
                self.on_vision_off(refused)
            return await self.ainvoke(messages, output_format, **kwargs)  # the same call, without its images
        if self.on_answer is not None:
            self.on_answer(response.completion)
        return response

    def usage(self) -> Usage:
        """Every answered call's tokens, valid or not, and their cost (None when the model's price is unknown)."""
        meter = self.meter
        return Usage(
            llm_calls=self.calls,
            llm_requests=meter.requests,
            prompt_tokens=meter.input_tokens,
            completion_tokens=meter.output_tokens,
            total_tokens=meter.input_tokens + meter.output_tokens,
            cost_usd=meter.cost,
        )

    def _record(self, fault: LLMFault) -> None:
        self.faults.append(fault)
        if self.on_fault is not None:
            self.on_fault(fault)


def scrubbed(messages: list[BaseMessage], redactor: Redactor) -> list[BaseMessage]:
    """Copies of `messages` with every secret, in any form, replaced by its placeholder: page text, URLs in the browser
    state, tool results and our own prompts alike. browser-use's `sensitive_data` filter knows raw values only.
    Screenshots are left as they are: they were masked in the browser before they were taken (agent/guards/masking.py)."""
    if not redactor.values:
        return messages
    out = []
    for message in messages:
        content = getattr(message, "content", None)
        if isinstance(content, list):
            content = [part if isinstance(part, ContentPartImageParam) else redactor.model(part) for part in content]
        # the content apart: its images (base64) are never read for a secret's text
        rest = redactor.model(message.model_copy(update={"content": None}))
        out.append(rest.model_copy(update={"content": redactor.value(content)}))
    return out


def classify(error: ModelProviderError, purpose: LLMPurpose, answered: bool = False) -> LLMFault:
    """Sort a provider exception by its type and cause: the model's output was unusable, or the provider failed.
    `answered`: the provider's HTTP answer was heard (TokenMeter), so an error without an HTTP status is the content's."""
    cause = error.__cause__
    if isinstance(error, ModelOutputTruncatedError):
        return LLMFault(kind="invalid_output", purpose=purpose, status=None, message=TRUNCATED)
    if isinstance(cause, ValidationError | json.JSONDecodeError):
        return unusable(cause, purpose)
    status = _http_status(cause)  # the provider's own, where browser-use guesses one (Gemini's 500 as 503, Ollama's as 502)
    if status is None:
        status = 429 if isinstance(error, ModelRateLimitError) else error.status_code
        if cause is not None and status == 502:
            # browser-use's default 502 stands for "no HTTP answer at all": name what really happened instead
            # (an answer was heard: e.g. Anthropic's answer without the forced tool call, invalid output as anywhere else)
            return unusable(cause, purpose) if answered else provider_fault(cause, purpose)
    return LLMFault(kind="provider", purpose=purpose, status=status, message=_one_line(error))


def unusable(error: BaseException, purpose: LLMPurpose) -> LLMFault:
    """The provider answered, and its answer held no output the agent could use: invalid output, like anywhere else."""
    if isinstance(error, ValidationError | json.JSONDecodeError):
        return LLMFault(kind="invalid_output", purpose=purpose, status=None, message=_validation_summary(error))
    root = _root(error)
    return LLMFault(
        kind="invalid_output",
        purpose=purpose,
        status=None,
        message=f"the model's answer held no usable output ({_one_line(root)})",
    )


def provider_fault(error: BaseException, purpose: LLMPurpose) -> LLMFault:
    """No answer was heard: the provider failed, named by what really happened (the innermost cause)."""
    root = _root(error)
    return LLMFault(
        kind="provider", purpose=purpose, status=None, message=f"no HTTP answer ({type(root).__name__}: {_one_line(root)})"
    )


def _root(error: BaseException) -> BaseException:
    while error.__cause__ is not None:
        error = error.__cause__
    return error


def _http_status(cause: BaseException | None) -> int | None:
    """The HTTP status of the provider's answer, from its SDK's own exception: `status_code` (OpenAI, Anthropic,
    Ollama) or google-genai's `code` (its module is loaded if the error is its own: importing it costs 2 CPU-s)."""
    genai_error = getattr(sys.modules.get("google.genai.errors"), "APIError", None)
    if genai_error is not None and isinstance(cause, genai_error):
        return cause.code if isinstance(cause.code, int) else None
    status = getattr(cause, "status_code", None)
    return status if isinstance(status, int) else None


def _validation_summary(error: ValidationError | json.JSONDecodeError) -> str:
    if isinstance(error, json.JSONDecodeError):
        return f"not JSON ({error.msg})"
    first = error.errors(include_url=False)[0]
    if first["type"] == "json_invalid":
        return "not valid JSON"
    where = ".".join(str(p) for p in first["loc"])
    return f"does not match the expected schema ({error.error_count()} problems; first at {where or 'top'}: {first['msg']})"


def _one_line(error: BaseException) -> str:
    return error_line(getattr(error, "message", None) or error) or type(error).__name__


Answer = TypeVar("Answer", bound=BaseModel)


def recording_llm(settings: LLMSettings, redactor: Redactor) -> RecordingLLM:
    """The provider's chat model wrapped as a test's is: metered, scrubbed of the run's secrets."""
    metered = make_llm(settings)
    return RecordingLLM(inner=metered.chat, redactor=redactor, meter=metered.meter)


async def ask(llm: RecordingLLM, instructions: str, question: str, answer: type[Answer]) -> Answer | None:
    """The model's answer in the shape of `answer`, or None when the call failed (its fault is in `llm.faults`)."""
    try:
        response = await llm.ainvoke([SystemMessage(content=instructions), UserMessage(content=question)], answer)
    except Exception:
        return None
    completion = response.completion
    return completion if isinstance(completion, answer) else None


OPEN = "<untrusted-page-text>"
CLOSE = "</untrusted-page-text>"
SECTIONS = ("browser_state", "read_state")  # browser-use's sections of the step message that hold what the pages show
# A copy of either marker inside the text, as a reader might take it for one (mcp/fence.py's rule, with this marker)
_MARKER = re.compile(r"[<\uff1c\ufe64\u2039\u2329\u27e8\u3008]\s*/?\s*untrusted[\W_]*page[\W_]*text", re.IGNORECASE)


def escape(text: str) -> str:
    """`text` with every copy of the fence's marker made inert (its `<` written `&lt;`)."""
    return _MARKER.sub(lambda m: "&lt;" + m.group()[1:], text)


def fence(text: str) -> str:
    """The page's text between the markers, each on a line of its own."""
    return f"{OPEN}\n{escape(text)}\n{CLOSE}"


def fence_sections(text: str) -> str:
    """The step message with each page section's content fenced (a message without them as it is)."""
    at = 0
    for name in SECTIONS:
        opening, closing = f"<{name}>\n", f"\n</{name}>"
        start = text.find(opening, at)
        end = text.rfind(closing)
        if start < 0 or end < start + len(opening):
            continue
        inner = text[start + len(opening) : end]
        text = text[: start + len(opening)] + fence(inner) + text[end:]
        at = start + len(opening) + len(fence(inner))
    return text


def fenced_messages(messages: list[Any]) -> list[Any]:
    """Copies of the agent's messages with the page sections of each user message fenced."""
    out = []
    for message in messages:
        if isinstance(message, UserMessage):
            content = message.content
            if isinstance(content, str):
                message = message.model_copy(update={"content": fence_sections(content)})
            else:
                parts = [
                    p.model_copy(update={"text": fence_sections(p.text)}) if isinstance(p, ContentPartTextParam) else p
                    for p in content
                ]
                message = message.model_copy(update={"content": parts})
        out.append(message)
    return out
