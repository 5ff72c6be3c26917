"""Whether the model is sent screenshots (--vision). Most models a team serves itself read no images (Llama 3.x,
Qwen, Mistral, Gemma's small ones): their servers refuse a request with one, and every test errored. `off` sends no
image part in any request; `auto` sends them until the provider says the model takes none, then turns them off for the
rest of the run, once, and the call is asked again without them (no test fails or errors for that alone); `on`
always sends them (a refusal is then the provider's error, as any)."""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from typing import Any

from preview_qa.config import Vision

# What the servers answer a request with an image for a model without one, read from their own sources and docs:
# llama.cpp's llama-server ("image input is not supported - hint: ... mmproj"), Ollama ("... does not support images"),
# vLLM ("... is not a multimodal model"), LM Studio ("Vision is not supported ..."), OpenAI ("image_url is only
# supported by certain models").
NO_IMAGES = re.compile(
    r"image input is not supported|does not support (?:images|image input|vision)|not a multimodal model"
    r"|vision is not supported|image_url is only supported|images? (?:are|is) not supported",
    re.IGNORECASE,
)


def takes_no_images(status: int | None, message: str) -> bool:
    """Whether a provider's refusal says the model reads no images: a 4xx/5xx whose message says so."""
    return status is not None and status >= 400 and NO_IMAGES.search(message) is not None


@dataclass
class VisionSwitch:
    """The run's one vision setting, shared by every test's LLM: what --vision says, and why auto turned it off."""

    mode: Vision = Vision.AUTO
    off_because: str | None = None  # the provider's refusal that turned auto off
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def sends_images(self) -> bool:
        return self.mode is Vision.ON or (self.mode is Vision.AUTO and self.off_because is None)

    def refused(self, status: int | None, message: str) -> bool:
        """Under auto, whether a refusal says the model takes no images: the call is asked again without them."""
        return self.mode is Vision.AUTO and takes_no_images(status, message)

    def learn(self, message: str) -> bool:
        """Images off for the rest of the run, for this refusal; whether it was the first (said once a run: tests
        running at once may each have had a call refused before any heard of it)."""
        with self._lock:
            first = self.off_because is None
            self.off_because = self.off_because or message
            return first


def without_images(messages: list[Any]) -> list[Any]:
    """The messages with every image part left out (the text parts, and so the page's text, kept)."""
    from browser_use.llm.messages import ContentPartImageParam, ContentPartTextParam  # with the LLM's call: not at start

    out = []
    for message in messages:
        content = getattr(message, "content", None)
        if isinstance(content, list) and any(isinstance(part, ContentPartImageParam) for part in content):
            kept = [part for part in content if not isinstance(part, ContentPartImageParam)]
            message = message.model_copy(update={"content": kept or [ContentPartTextParam(text="(no screenshot)")]})
        out.append(message)
    return out
