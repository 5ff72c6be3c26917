"""One structured LLM call outside a test (planning's drafts, issue #39), through the run's RecordingLLM: secrets
scrubbed from what is sent, tokens and cost metered, a failure recorded as a typed LLMFault."""

from __future__ import annotations

from typing import TypeVar

from browser_use.llm.messages import SystemMessage, UserMessage
from pydantic import BaseModel

from preview_qa.agent.adapter.llm import RecordingLLM, make_llm
from preview_qa.providers import LLMSettings
from preview_qa.secrets.redact import Redactor

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
