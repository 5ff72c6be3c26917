"""Sends a test's `before:` and `after:` requests to the preview, never to another host: from preview-qa itself (httpx),
with the preview's extra headers and basic auth, its secrets and saved values filled in; each request and its answer is
an event (secrets redacted). A `before` that does not answer as expected errors the test; an `after` that does not is a
warning on the test (its own verdict stands)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from preview_qa.events import Event, Observed
from preview_qa.manifest.models import SECRET_TAG, VAR_TAG, ApiRequest, TestSpec
from preview_qa.testdata.values import MISSING, as_text, each_text, fill_text, filled, read_path

REQUEST_TIMEOUT_S = 15.0  # one request's answer; an `after` on a cancelled run has the run's teardown grace in all
ANSWER_SHOWN = 500  # characters of an answer kept in its event


@dataclass
class TestData:
    """One run of one test's API requests: `before()` once its browser is ready, `after()` however it ended."""

    __test__ = False

    spec: TestSpec
    base_url: str  # the deployment's URL: a request's path goes under it
    headers: Mapping[str, str]  # the preview's own (--extra-header, basic auth): for its origin alone
    secrets: Mapping[str, str]
    emit: Callable[[Event], None]
    redact: Callable[[str], str]
    values: dict[str, str] = field(default_factory=dict)  # what the before requests saved so far
    began: bool = False  # the before requests were started: only then is there anything to clean up
    after_failed: list[str] = field(default_factory=list)

    async def before(self) -> str | None:
        """Send the before requests in order; why the test errors, if one did not answer as expected (the rest are
        not sent)."""
        self.began = True
        for request in self.spec.before:
            problem = await self._send("before", request)
            if problem is not None:
                return f"before: {problem}"
        return None

    async def after(self) -> None:
        """Send every after request (each one, whatever the others answered), if the before requests were started; a
        request needing a value no before request saved is not sent, and said."""
        if not self.began:
            return
        for request in self.spec.after:
            missing = [name for name in VAR_TAG.findall(request.texts) if name not in self.values]
            problem = (
                f"{request.line} not sent: no before request saved {', '.join(dict.fromkeys(missing))}"
                if missing
                else await self._send("after", request)
            )
            if problem is not None:
                self.after_failed.append(f"after: {problem}")

    def filled(self, spec: TestSpec) -> TestSpec:
        """`spec` with the saved values in place of its <var>s."""
        return filled(spec, self.values)

    def fill_text(self, text: str) -> str:
        return fill_text(text, self.values)

    async def _send(self, when: str, request: ApiRequest) -> str | None:
        """Send one request; what went wrong, in words, or None."""
        url = self.base_url.rstrip("/") + fill_text(request.path, self.values)
        line = f"{request.method} {self.redact(urlsplit(url).path or '/')}"
        if _origin(url) != _origin(self.base_url):  # a saved value cannot lead it elsewhere
            return self._said(when, request, line, None, "", f"{line} refused: it leads off the preview")
        headers = {**self.headers, **{name: self._secret(value) for name, value in request.headers.items()}}
        body = each_text(request.body, self._secret)
        import httpx  # only a test with requests pays its import

        try:
            async with httpx.AsyncClient(follow_redirects=False, timeout=REQUEST_TIMEOUT_S) as client:
                answer = await client.request(request.method, url, headers=headers, json=body)
        except httpx.HTTPError as e:
            return self._said(when, request, line, None, "", f"{line} got no answer ({type(e).__name__}: {e})")
        text = answer.text
        if not request.expected(answer.status_code):
            wanted = "a 2xx" if request.expect_status is None else str(request.expect_status)
            problem = f"{line} answered {answer.status_code} (expected {wanted})"
            return self._said(when, request, line, answer.status_code, text, problem)
        unsaved = self._save(request, line, text) if when == "before" else None
        return self._said(when, request, line, answer.status_code, text, unsaved)

    def _save(self, request: ApiRequest, line: str, text: str) -> str | None:
        if not request.save:
            return None
        try:
            document: Any = json.loads(text)
        except ValueError:
            return f"{line}: its answer is not JSON, so {', '.join(request.save)} could not be saved"
        for name, path in request.save.items():
            value = read_path(document, path)
            if value is MISSING:
                return f"{line}: its answer has no {path} (for <var>{name}</var>)"
            self.values[name] = as_text(value)
        return None

    def _said(self, when: str, request: ApiRequest, line: str, status: int | None, text: str, problem: str | None) -> str | None:
        """The request's event (what it asked, as written: secrets as placeholders; what it answered, redacted)."""
        detail = {
            "when": when,
            "request": line,
            "status": status,
            "expected": request.expect_status or "2xx",
            "answer": self.redact(text[:ANSWER_SHOWN]),
            "saved": sorted(request.save) if problem is None and when == "before" else [],
            "problem": problem,
        }
        self.emit(Observed(name=self.spec.name, kind="api_request", error=problem is not None, detail=detail))
        return problem

    def _secret(self, text: str) -> str:
        """`text` with its <secret>s and <var>s filled in: what goes to the preview alone."""
        return SECRET_TAG.sub(lambda m: self.secrets.get(m.group(1), m.group(0)), fill_text(text, self.values))


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()
