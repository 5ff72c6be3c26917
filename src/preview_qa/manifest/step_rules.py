"""The loader's rules for a test that no single key can check: where its secrets are used, a literal URL it starts on
or opens, where its data is read, the personas it runs as, and the values its API requests save."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Iterator, Mapping
from urllib.parse import urlsplit

from preview_qa.manifest.models import SECRET_TAG, VAR_TAG, Persona, TestSpec
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
    `open:` on a host that is neither the preview's nor in allowed_domains, data read with no `do` step to read it, an
    expect.status where no open answers."""
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
    last_opens = bool(test.steps) and test.steps is not None and test.steps[-1].open is not None
    if test.expect.status is not None and not last_opens:
        yield (*at, "expect", "status"), "expect.status checks what an open answered: this test's last step is no open."
    for j, step in enumerate(test.steps or []):
        if step.expect.status is not None and step.open is None:
            yield (*at, "steps", j, "expect", "status"), "expect.status checks what an open answered: give it on an open."
    if test.steps is not None and test.data_step is None and (test.output_schema is not None or test.expect.data):
        key = "output_schema" if test.output_schema is not None else "expect"
        yield (
            (*at, key),
            "the test's data is read by its last `do` step (the agent's report), and this test has no do step; "
            "check the page with expect's page checks instead.",
        )


def persona_problems(test: TestSpec, personas: Mapping[str, Persona], at: Loc) -> Iterator[tuple[Loc, str]]:
    """A test's `as` and `expect_as` name declared personas, once each; a setup test (save_state) runs once."""
    known = ", ".join(sorted(personas)) or "none"
    for j, name in enumerate(test.runs_as or []):
        if name not in personas:
            yield (*at, "as", j), f"unknown persona '{name}'{_nearest(name, personas)} (personas: {known})."
        elif (test.runs_as or []).index(name) < j:
            yield (*at, "as", j), f"persona '{name}' is listed twice; list each persona once."
    if test.runs_as and test.save_state is not None:
        yield (*at, "as"), "a test with save_state runs once, as itself; run the tests that use its state as personas."
    for name in test.expect_as:
        if name not in personas:
            yield (*at, "expect_as", name), f"unknown persona '{name}'{_nearest(name, personas)} (personas: {known})."
        elif name not in (test.runs_as or []):
            yield (*at, "expect_as", name), f"the test does not run as '{name}': add it to the test's as, or remove it."


def _nearest(name: str, names: Iterable[str]) -> str:
    guess = difflib.get_close_matches(name, list(names), n=1)
    return f"; did you mean '{guess[0]}'?" if guess else ""


def request_problems(test: TestSpec, at: Loc) -> Iterator[tuple[Loc, str]]:
    """Each <var>name</var> a test uses is saved by a `before` request (an earlier one, for a request), and each
    <secret> in its requests is declared."""
    saved: set[str] = set()
    for key in ("before", "after"):
        for k, request in enumerate(getattr(test, key)):
            text = request.texts
            if SECRET_TAG.search(request.path):  # a path is in every event and log line; a header or body is not
                yield (*at, key, k, "path"), "a secret goes in a header or the JSON body, never in the path (it is logged)."
            for placeholder in SECRET_TAG.findall(text):
                if placeholder not in test.secrets:
                    undeclared = f"uses <secret>{placeholder}</secret> but 'secrets' does not declare '{placeholder}'"
                    yield (*at, key, k), f"{undeclared}; add it under secrets."
            yield from _unsaved((*at, key, k), text, saved, "earlier before request")
            if key == "before":
                saved |= set(request.save)
    places: list[tuple[Loc, str]] = [((*at, "task"), test.task or ""), ((*at, "start"), test.start)]
    places += [((*at, "expect"), test.expect.model_dump_json()), *step_texts(test, at)]
    places += [((*at, "expect_as", name), e.model_dump_json()) for name, e in test.expect_as.items()]
    for j, step in enumerate(test.steps or []):
        places += [((*at, "steps", j, "open"), step.open or ""), ((*at, "steps", j, "expect"), step.expect.model_dump_json())]
    for loc, text in places:
        yield from _unsaved(loc, text, saved, "before request")


def _unsaved(loc: Loc, text: str, saved: set[str], by: str) -> Iterator[tuple[Loc, str]]:
    for name in dict.fromkeys(VAR_TAG.findall(text)):
        if name not in saved:
            yield loc, f"uses <var>{name}</var> but no {by} saves '{name}'; give it save: {{{name}: $.id}} (its JSON path)."


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
