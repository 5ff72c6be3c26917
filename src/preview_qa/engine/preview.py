"""Wait for the preview deployment to answer before spending any LLM call on it."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from urllib.parse import urlsplit

import httpx

READY = range(200, 400)
READY_AUTH = (401, 403)  # protected previews answer, they just want credentials the browser may have


async def wait_for_preview(
    url: str,
    timeout: float,
    headers: dict[str, str] | None = None,
    interval: float = 2.0,
    on_protected: Callable[[int], None] | None = None,
) -> str | None:
    """None once `url` answers 2xx/3xx/401/403 (a 401/403 told to `on_protected`); otherwise, when `timeout` runs
    out, what happened last."""
    deadline = time.monotonic() + timeout
    last = "no answer"
    async with httpx.AsyncClient(headers=headers, follow_redirects=False, timeout=10.0) as client:
        while True:
            try:
                response = await client.get(url)
                if response.status_code in READY_AUTH and on_protected is not None:
                    on_protected(response.status_code)
                if response.status_code in READY or response.status_code in READY_AUTH:
                    return None
                last = f"HTTP {response.status_code} from {url}"
            except httpx.HTTPError as e:
                last = f"{type(e).__name__} for {url}: {' '.join(str(e).split()) or 'no detail'}"
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return last
            await asyncio.sleep(min(interval, remaining))


def origin_of(url: str) -> str:
    """scheme://host[:port]: what the preview is, whatever path a URL on it has."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"
