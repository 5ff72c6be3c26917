"""Wait for the preview deployment to answer before spending any LLM call on it."""

from __future__ import annotations

import asyncio
import importlib
import time
from collections.abc import Callable
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from preview_qa.config import RunConfig
from preview_qa.events import RunTarget
from preview_qa.manifest.models import TestSpec

if TYPE_CHECKING:
    import httpx

# What a deployment still starting answers (its proxy's gateway errors, a rate limit); any other status is the app's own
# answer, a 404 at `/` included (an app without a home page): its tests find what it means
NOT_YET = (429, *range(500, 600))
READY_AUTH = (401, 403)  # protected previews answer, they just want credentials the browser may have


async def wait_for_preview(
    url: str,
    timeout: float,
    headers: dict[str, str] | None = None,
    interval: float = 2.0,
    on_protected: Callable[[int], None] | None = None,
) -> str | None:
    """None once `url` answers with a status a running app gives (any but 429 and 5xx; a 401/403 told to
    `on_protected`); otherwise, when `timeout` runs out, what happened last."""
    deadline = time.monotonic() + timeout
    last = "no answer"
    async with await _client(headers) as client:
        while True:
            answer = await _ask(client, url)
            if isinstance(answer, int):
                if answer in READY_AUTH and on_protected is not None:
                    on_protected(answer)
                if answer not in NOT_YET:
                    return None
                last = f"HTTP {answer} from {url}"
            else:
                last = answer
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return last
            await asyncio.sleep(min(interval, remaining))


async def no_answer(url: str, headers: dict[str, str] | None = None) -> str | None:
    """Why `url` gives no HTTP answer at all (refused, unknown host, timeout), in one line; None when it answers,
    whatever its status."""
    async with await _client(headers) as client:
        answer = await _ask(client, url)
    return answer if isinstance(answer, str) else None


async def _client(headers: dict[str, str] | None) -> httpx.AsyncClient:
    """An HTTP client; httpx is imported on a thread (about 0.07 s): the run's first browser starts meanwhile."""
    http = await asyncio.to_thread(importlib.import_module, "httpx")
    client: httpx.AsyncClient = http.AsyncClient(headers=headers, follow_redirects=False, timeout=10.0)
    return client


async def _ask(client: httpx.AsyncClient, url: str) -> int | str:
    """The status `url` answers with, or what went wrong."""
    import httpx

    try:
        return (await client.get(url)).status_code
    except httpx.HTTPError as e:
        return _failed(e, url)


def _failed(error: Exception, url: str) -> str:
    """What went wrong asking `url`, in one line."""
    return f"{type(error).__name__} for {url}: {' '.join(str(error).split()) or 'no detail'}"


def origin_of(url: str) -> str:
    """scheme://host[:port]: what the preview is, whatever path a URL on it has."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def target_url(config: RunConfig, spec: TestSpec, target: RunTarget = RunTarget.PREVIEW) -> str:
    """The deployment a run of the test is on: the baseline's, else its app's preview (checked to be there when the
    tests were selected), else --base-url's."""
    if target == RunTarget.BASELINE and config.baseline_url:
        return config.baseline_url
    url = config.url_of(spec.app) or config.base_url
    if url is None:
        raise RuntimeError(f"test {spec.name!r} is on no preview; selection lets no such test run")
    return url


async def llm_endpoint(provider: str, model: str, api_key: str | None, base_url: str | None) -> tuple[str | None, str | None]:
    """For an endpoint given (--llm-base-url, or Ollama's host) of a protocol that lists its models (OpenAI's /models,
    Ollama's /api/tags): why it gave no HTTP answer (None: it answered), and a note when it does not list `model`
    (a server such as llama.cpp's serves its one model whatever name it is asked for: so a note, not a refusal)."""
    import httpx

    if provider == "ollama":
        url = f"{(base_url or 'http://localhost:11434').rstrip('/')}/api/tags"
    elif provider == "openai" and base_url:
        url = f"{base_url.rstrip('/')}/models"
    else:
        return None, None
    headers = {"Authorization": f"Bearer {api_key}"} if api_key and provider == "openai" else None
    async with await _client(headers) as client:
        try:
            answer = await client.get(url)
        except httpx.HTTPError as e:
            return _failed(e, url), None
    try:
        body = answer.json() if answer.status_code == 200 else {}
    except ValueError:
        body = {}
    listed = [str(m.get("id") or m.get("name")) for m in body.get("data") or body.get("models") or [] if isinstance(m, dict)]
    if answer.status_code != 200:
        return None, f"GET {url} answered HTTP {answer.status_code}: the models it serves could not be listed"
    if listed and model not in listed:
        return None, f"{url} does not list model {model!r} (it lists: {', '.join(listed[:10])})"
    return None, None
