"""GitHub's REST API as a workflow step sees it: the job's token, the event that started the run, pages of results."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Self

import httpx

PER_PAGE = 100


class GitHubError(Exception):
    """GitHub did not answer as asked (403 on fork PRs, or any HTTP/network failure); the message says which call."""


def read_event(path: str | None) -> dict[str, Any] | None:
    """The webhook payload the runner saved for this run (GITHUB_EVENT_PATH), or None when there is none to read."""
    if not path:
        return None
    try:
        event = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return event if isinstance(event, dict) else None


class GitHubApi:
    """One repository's API with one token."""

    def __init__(self, api_url: str, repository: str, token: str):
        self.repository = repository
        self.client = httpx.Client(
            base_url=api_url.rstrip("/"),
            timeout=30.0,
            headers={
                "Authorization": f"Bearer {token}",
                "Accept": "application/vnd.github+json",
                "X-GitHub-Api-Version": "2022-11-28",
                "User-Agent": "preview-qa",
            },
        )

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Self | None:
        """The API of the run's repository with the action's token (else GITHUB_TOKEN); None without either."""
        token = env.get("INPUT_GITHUB-TOKEN") or env.get("GITHUB_TOKEN")
        if not token or not env.get("GITHUB_REPOSITORY"):
            return None
        return cls(env.get("GITHUB_API_URL") or "https://api.github.com", env["GITHUB_REPOSITORY"], token)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.client.close()

    def call(self, method: str, path: str, **kwargs: Any) -> Any:
        try:
            response = self.client.request(method, path, **kwargs)
        except httpx.HTTPError as e:
            raise GitHubError(f"{type(e).__name__}: {e}") from None
        if response.status_code >= 400:
            message = ""
            if response.headers.get("content-type", "").startswith("application/json"):
                message = str(response.json().get("message") or "")
            raise GitHubError(f"HTTP {response.status_code} from {method} {path}{': ' + message if message else ''}")
        return response.json()

    def pages(self, path: str, limit: int) -> Iterator[list[Any]]:
        """A listing page by page (100 a page) until a short page, or `limit` pages."""
        for page in range(1, limit + 1):
            items = self.call("GET", path, params={"per_page": PER_PAGE, "page": page})
            yield items
            if len(items) < PER_PAGE:
                return

    def pull_request_number(self, event: dict[str, Any]) -> int | None:
        """The PR of a pull_request event; for a deployment_status event (Vercel), the open PR of the deployed commit."""
        number = (event.get("pull_request") or {}).get("number")
        if isinstance(number, int):
            return number
        sha = (event.get("deployment") or {}).get("sha")
        if not isinstance(sha, str) or not re.fullmatch(r"[0-9a-f]{40}", sha):
            return None
        pulls = self.call("GET", f"/repos/{self.repository}/commits/{sha}/pulls")
        return next((p["number"] for p in pulls if p.get("state") == "open"), None)
