"""The pull request comment: one sticky comment per manifest, found by its marker and updated in place."""

from __future__ import annotations

from preview_qa.reporters.github.api import GitHubApi


class PullRequestComments(GitHubApi):
    """One sticky comment per manifest on a pull request, through the REST API."""

    def upsert(self, number: int, marker: str, body: str) -> None:
        existing = self._find(number, marker)
        if existing is None:
            self.call("POST", f"/repos/{self.repository}/issues/{number}/comments", json={"body": body})
        else:
            self.call("PATCH", f"/repos/{self.repository}/issues/comments/{existing}", json={"body": body})

    def _find(self, number: int, marker: str) -> int | None:
        # 30 pages: 3,000 comments; a PR with more is not worth more requests
        for comments in self.pages(f"/repos/{self.repository}/issues/{number}/comments", limit=30):
            found: int | None = next((c["id"] for c in comments if marker in (c.get("body") or "")), None)
            if found is not None:
                return found
        return None
