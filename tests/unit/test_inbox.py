"""The inbox (issue #69): Mailpit's API read from answers written as its documentation gives them, MailDev's shape,
the wait for a new mail and its message when none comes, a mail's codes and link tokens, the address per run, and the
manifest's rules for `inbox:` and the `email` step."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import httpx
import pytest

from preview_qa.errors import ManifestError, ManifestProblems
from preview_qa.inbox.catchers import CatcherError, Mail, MailDev, Mailpit
from preview_qa.inbox.mail import (
    Mailbox,
    MailNotFound,
    for_the_agent,
    new_address,
    not_found,
    page,
    readdressed,
    tokens,
    with_links,
)
from preview_qa.manifest.loader import loads
from preview_qa.manifest.steps import Email

DATA = Path(__file__).parents[1] / "data" / "mailpit"
ADDRESS = "pqa-sign-up-0a1b2c3d4e@inbox.preview-qa.test"


def _mailpit(asked: list[str]) -> httpx.AsyncClient:
    def answer(request: httpx.Request) -> httpx.Response:
        asked.append(unquote(str(request.url)))
        if request.url.path == "/api/v1/search":
            return httpx.Response(200, json=json.loads((DATA / "search.json").read_text()))
        ident = request.url.path.removeprefix("/api/v1/message/")
        if ident in ("CuW2bsEXWq9hLQJNtfC7RE", "P3sHk2nV9Tq8aLxWm4Rz7C"):
            return httpx.Response(200, json=json.loads((DATA / f"message-{ident[:4]}.json").read_text()))
        return httpx.Response(404, json={"Error": "message not found"})

    return httpx.AsyncClient(transport=httpx.MockTransport(answer))


def _run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


def test_mailpit_lists_an_addresses_mails_newest_first_with_the_parts_of_the_one_opened() -> None:
    asked: list[str] = []
    box = Mailbox(ADDRESS, Mailpit("http://mailpit:8025", _mailpit(asked)))
    mail = _run(box.wait(Email(subject="verify"), 1))
    assert asked[0] == f'http://mailpit:8025/api/v1/search?query=to:"{ADDRESS}"'
    assert (mail.id, mail.subject, mail.sender) == (
        "CuW2bsEXWq9hLQJNtfC7RE",
        "Verify your email",
        "Acme Shop <no-reply@acme.test>",
    )
    assert mail.links == ["http://127.0.0.1:8000/verify?token=q7Zk2VtB9wXe4LmN"]
    assert "Your code is <b>482913</b>" in mail.html


def test_a_mailpit_mail_that_never_comes_names_those_that_did() -> None:
    box = Mailbox(ADDRESS, Mailpit("http://mailpit:8025", _mailpit([])))
    with pytest.raises(MailNotFound) as e:
        _run(box.wait(Email(subject="Welcome"), 0))
    said = f"no mail to {ADDRESS} with subject 'Welcome' in 0 s (2 other mails arrived: 'Verify your email', 'Our newsletter')"
    assert str(e.value) == said


def test_a_mail_once_opened_is_not_opened_again_the_wait_is_for_a_new_one() -> None:
    box = Mailbox(ADDRESS, Mailpit("http://mailpit:8025", _mailpit([])))
    assert _run(box.wait(Email(subject="verify"), 0)).id == "CuW2bsEXWq9hLQJNtfC7RE"
    with pytest.raises(MailNotFound, match=r"in 0 s \(1 other mail arrived: 'Our newsletter'\)"):
        _run(box.wait(Email(subject="verify"), 0))


def test_from_matches_the_senders_name_or_address() -> None:
    box = Mailbox(ADDRESS, Mailpit("http://mailpit:8025", _mailpit([])))
    assert _run(box.wait(Email(subject="our", **{"from": "news@"}), 0)).subject == "Our newsletter"
    with pytest.raises(MailNotFound, match="subject 'verify' from 'billing'"):
        _run(box.wait(Email(subject="verify", **{"from": "billing"}), 0))


def test_maildev_reads_its_own_shape_and_keeps_the_addresses_mails_only() -> None:
    mails = [
        {
            "id": "a1",
            "time": "2026-12-04T18:59:38.232Z",
            "subject": "Old",
            "from": [{"address": "x@acme.test", "name": ""}],
            "to": [{"address": ADDRESS, "name": ""}],
            "html": "",
            "text": "hello",
        },
        {
            "id": "b2",
            "time": "2026-12-04T19:00:01.000Z",
            "subject": "New",
            "from": [{"address": "x@acme.test", "name": "X"}],
            "to": [{"address": ADDRESS.upper(), "name": ""}],
            "html": "<p>new</p>",
            "text": "new",
        },
        {"id": "c3", "time": "2026-12-04T19:00:02.000Z", "subject": "Other's", "from": [], "to": [{"address": "z@q.test"}]},
    ]
    asked: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        asked.append(unquote(str(request.url)))
        return httpx.Response(200, json=mails)

    catcher = MailDev("http://maildev:1080", httpx.AsyncClient(transport=httpx.MockTransport(answer)))
    found = _run(catcher.mails_to(ADDRESS))
    assert asked == [f"http://maildev:1080/api/email?to.address={ADDRESS}"]
    assert [(m.id, m.sender) for m in found] == [("b2", "X <x@acme.test>"), ("a1", "x@acme.test")]


def test_a_catcher_that_is_not_one_says_so() -> None:
    client = httpx.AsyncClient(transport=httpx.MockTransport(lambda r: httpx.Response(200, text="<html>")))
    with pytest.raises(CatcherError, match="is not JSON: is it the right URL"):
        _run(MailDev("http://wrong", client).mails_to(ADDRESS))
    client = httpx.AsyncClient(transport=httpx.MockTransport(lambda r: httpx.Response(404, text="")))
    box = Mailbox(ADDRESS, MailDev("http://old", client))
    with pytest.raises(MailNotFound, match="answered HTTP 404 to GET http://old/api/email"):
        _run(box.wait(Email(subject="x"), 0))


def test_a_mails_codes_and_link_tokens_are_secrets_its_ordinary_words_and_numbers_are_not() -> None:
    mail = with_links(
        Mail(
            "1",
            "Your code",
            "a",
            [],
            "",
            html="<p>Code 482913, or K7Q-2ZD. Order 12 of 2026.</p>"
            "<a href='https://app.test/magic/Xy7Qk2LmPz9R'>Sign in</a><a href='https://app.test/reset?t=abcd1234efgh&page=2'>x</a>",
        )
    )
    found = tokens(mail)
    assert sorted(found.values()) == ["482913", "K7Q-2ZD", "Xy7Qk2LmPz9R", "abcd1234efgh"]
    assert all(name.startswith(("mail-link-token-", "mail-code-")) for name in found)


def test_a_text_mail_opens_as_a_page_with_its_links_clickable_and_its_html_escaped() -> None:
    mail = with_links(Mail("1", "Hi <you>", "Acme <a@acme.test>", [], "", text="Go: https://app.test/v?t=1 <b>now</b>"))
    document = page(mail)
    assert "<a href='https://app.test/v?t=1'>https://app.test/v?t=1</a>" in document
    assert "&lt;b&gt;now&lt;/b&gt;" in document and "<title>Hi &lt;you&gt;</title>" in document
    assert mail.links == ["https://app.test/v?t=1"]


def test_each_run_gets_an_address_of_its_own_and_a_recording_types_the_new_one() -> None:
    first, second = new_address("Sign-up: one!", "inbox.test"), new_address("Sign-up: one!", "inbox.test")
    assert first != second and first.startswith("pqa-sign-up-one-") and first.endswith("@inbox.test")
    recorded = {"history": [{"model_output": {"action": [{"input": {"index": 3, "text": first}}]}}], "n": 1}
    assert readdressed(recorded, second) == {
        "history": [{"model_output": {"action": [{"input": {"index": 3, "text": second}}]}}],
        "n": 1,
    }


def test_not_found_with_no_other_mail_and_with_many() -> None:
    many = [Mail(str(i), f"S{i}", "", [], "") for i in range(5)]
    assert (
        not_found("a@b.test", Email(subject="W"), 30, [])
        == "no mail to a@b.test with subject 'W' in 30 s (no other mail arrived)"
    )
    assert not_found("a@b.test", Email(subject="W"), 30, many).endswith("(5 other mails arrived: 'S0', 'S1', 'S2', …)")


def _problems(text: str) -> list[str]:
    with pytest.raises(ManifestError) as e:
        loads(text, "qa.yml")
    return [str(p) for p in e.value.problems] if isinstance(e.value, ManifestProblems) else [str(e.value)]


def test_the_manifest_names_one_catcher_and_a_test_using_the_inbox_needs_it() -> None:
    steps = "    steps:\n      - fill: {label: Email, value: <inbox>}\n      - email: {subject: Hi}\n"
    said = _problems("version: 1\ntests:\n  - name: a\n" + steps)
    assert said[0].startswith("qa.yml:5: tests[0].steps[0].fill.value: uses <inbox>")
    assert said[1].startswith(
        "qa.yml:6: tests[0].steps[1].email: an email step reads the test's mail, but the manifest has no inbox"
    )
    said = _problems("version: 1\ninbox: {maildev: http://a, mailpit: http://b}\ntests: [{name: a, task: t}]\n")
    assert "inbox: name one mail catcher: {maildev: URL} or {mailpit: URL}" in said[0]
    said = _problems("version: 1\ninbox: {maildev: http://a}\ntests: [{name: a, steps: [{email: {subject: Hi, form: x}}]}]\n")
    assert "unknown key 'form'; did you mean 'from'?" in said[0]
    manifest = loads(
        "version: 1\ninbox: {mailpit: 'http://m:8025/', domain: x.test}\ntests: [{name: a, task: 'Sign up as <inbox>'}]\n"
    )
    assert manifest.inbox is not None and (manifest.inbox.url, manifest.inbox.domain) == ("http://m:8025", "x.test")


def test_the_agent_reads_a_mail_as_its_words_and_links_or_that_none_came() -> None:
    mail = with_links(Mail("1", "Your code", "Acme <a@acme.test>", [], "2026-12-04T19:00:00Z", html="<p>Code <b>482913</b></p>"))
    said = for_the_agent(mail, ADDRESS)
    assert said.startswith("Subject: Your code\nFrom: Acme <a@acme.test>\nReceived: 2026-12-04T19:00:00Z\n\nCode  482913")
    assert said.endswith("Links: none")
    assert for_the_agent(None, ADDRESS) == f"No mail has arrived at {ADDRESS} yet."


def test_a_run_with_an_inbox_writes_its_own_address_where_the_test_and_its_recordings_had_one() -> None:
    from preview_qa.agent.session import with_inbox
    from preview_qa.engine.agent_port import AgentRequest, Recording

    manifest = loads(
        "version: 1\ninbox: {maildev: 'http://m:1080', domain: mail.example.com}\ntests:\n  - name: Sign up\n    steps:\n"
        "      - fill: {label: Email, value: <inbox>}\n      - do: Sign up as <inbox> and check the mail.\n"
    )
    old = "pqa-sign-up-0a1b2c3d4e@mail.example.com"
    recorded = Recording("http://app", {"history": [{"model_output": {"action": [{"input": {"index": 2, "text": old}}]}}]})
    request = AgentRequest(manifest.tests[0], "http://app/", "http://app", [], {}, lambda e: None, inbox=manifest.inbox)
    run, mailbox = with_inbox(dataclasses.replace(request, step_recordings={2: recorded}))
    assert mailbox is not None and mailbox.address.endswith("@mail.example.com") and mailbox.address != old
    steps = run.spec.steps or []
    assert steps[0].fill is not None and steps[0].fill.value == mailbox.address
    assert steps[1].do == f"Sign up as {mailbox.address} and check the mail."
    assert json.dumps(run.step_recordings[2].history).count(mailbox.address) == 1 and old not in json.dumps(
        run.step_recordings[2].history
    )
    assert manifest.tests[0].steps is not None and manifest.tests[0].steps[0].fill.value == "<inbox>"  # the manifest's own stays
    assert with_inbox(dataclasses.replace(request, inbox=None)) == (dataclasses.replace(request, inbox=None), None)
    _run(mailbox.close())


def test_a_code_in_the_html_part_alone_is_a_secret_too() -> None:
    mail = with_links(Mail("1", "Hi", "a", [], "", html="<p>Your code: <b>739204</b></p>", text="Welcome to Acme!"))
    assert list(tokens(mail).values()) == ["739204"]
