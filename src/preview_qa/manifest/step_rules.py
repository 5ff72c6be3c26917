"""The loader's rules for a test that no single key can check: where its secrets are used, a literal URL it starts on
or opens, and where its data is read."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from urllib.parse import urlsplit

from preview_qa.manifest.models import TestSpec
from preview_qa.manifest.steps import INBOX
from preview_qa.manifest.yaml_source import Loc


def step_texts(test: TestSpec, at: Loc) -> list[tuple[Loc, str]]:
    """Each text of the test's steps that may hold a secret's placeholder, with its key: goals and fill values."""
    found: list[tuple[Loc, str]] = []
    for j, step in enumerate(test.steps or []):
        if step.do is not None:
            found.append(((*at, "steps", j, "do"), step.do))
        if step.fill is not None:
            found.append(((*at, "steps", j, "fill", "value"), step.fill.value))
    return found


def allows_host(hosts: Iterable[str], host: str) -> bool:
    """Whether `host` is one of `hosts` or a subdomain of an allowed `*.example.com` (names compared without case)."""
    host = host.lower()
    return any(host == h or (h.startswith("*.") and (host == h[2:] or host.endswith(h[1:]))) for h in map(str.lower, hosts))


def steps_problems(test: TestSpec, at: Loc) -> Iterator[tuple[Loc, str]]:
    """What is wrong with the test as a whole (each with its key, and the sentence that says so): a start or an
    `open:` on a host that is neither the preview's nor in allowed_domains, data read with no `do` step to read it."""
    opened = [((*at, "steps", j, "open"), step.open) for j, step in enumerate(test.steps or []) if step.open is not None]
    for loc, url in [((*at, "start"), test.start), *opened]:
        host = urlsplit(url).hostname if "://" in url else None
        if host is not None and not allows_host(test.allowed_domains, host):
            path = urlsplit(url).path or "/"
            yield (
                loc,
                f"{url!r} is outside the preview and this test's allowed_domains; give a path (such as {path}) under "
                f"the preview, or add {host} to allowed_domains.",
            )
    if test.steps is not None and test.data_step is None and (test.output_schema is not None or test.expect.data):
        key = "output_schema" if test.output_schema is not None else "expect"
        yield (
            (*at, key),
            "the test's data is read by its last `do` step (the agent's report), and this test has no do step; "
            "check the page with expect's page checks instead.",
        )


def inbox_problems(test: TestSpec, has_inbox: bool, at: Loc) -> Iterator[tuple[Loc, str]]:
    """An `email` step, or an <inbox> address, needs the manifest's inbox: the catcher the preview's mail goes to."""
    if has_inbox:
        return
    hint = "add the mail catcher at the top level: inbox: {maildev: URL} (or {mailpit: URL})"
    texts = [((*at, "task"), test.task or ""), *step_texts(test, at)]
    for loc, text in texts:
        if INBOX in text:
            yield loc, f"uses <inbox> (the test's mail address) but the manifest has no inbox; {hint}."
    for j, step in enumerate(test.steps or []):
        if step.email is not None:
            yield (*at, "steps", j, "email"), f"an email step reads the test's mail, but the manifest has no inbox; {hint}."
