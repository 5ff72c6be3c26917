"""A test's mailbox: its own address, the wait for the newest matching mail it has not opened yet, and what a mail
holds: its links, the one-time codes and link tokens in it (secrets of the run), and the sandboxed page it opens as."""

from __future__ import annotations

import asyncio
import html
import re
import secrets
import time
from dataclasses import dataclass, field, replace
from html.parser import HTMLParser
from urllib.parse import parse_qsl, urlsplit

from preview_qa.inbox.catchers import Catcher, CatcherError, Mail
from preview_qa.manifest.steps import INBOX, Email, TestStep

POLL_S = 0.5  # between two looks at the catcher: a mail is sent as the page submits, and lands within a second
CODE = re.compile(r"(?<![\w-])(?=[A-Z0-9-]*\d)[A-Z0-9]{3,}(?:-[A-Z0-9]{3,})?(?![\w-])")  # 123456, ABC-123, K7Q2ZD
TOKEN_MIN = 6  # a shorter query value or path segment is no token (an id, a page number), and cannot be redacted
# Only script-free styling and inline images: no script, no request of the mail's own; a link is followed on a click.
POLICY = (
    "sandbox allow-popups allow-popups-to-escape-sandbox allow-top-navigation; "
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
)
ADDRESS = re.compile(r"pqa-[a-z0-9-]*-[0-9a-f]{10}@[A-Za-z0-9.-]+")  # what `new_address` makes (in a recording)


class MailNotFound(Exception):
    """No mail matched before the step's timeout, in one line."""


def new_address(test: str, domain: str) -> str:
    """A fresh address for one run of one test: its name's first letters (to tell them apart in the catcher), and a
    random part, so that concurrent tests, retries and later runs never read each other's mail."""
    slug = re.sub(r"[^a-z0-9]+", "-", test.lower()).strip("-")[:24].strip("-") or "test"
    return f"pqa-{slug}-{secrets.token_hex(5)}@{domain}".lower()


def matches(mail: Mail, wanted: Email) -> bool:
    sender = wanted.sender is None or wanted.sender.lower() in mail.sender.lower()
    return sender and wanted.subject.lower() in mail.subject.lower()


@dataclass
class Mailbox:
    """One test run's address on the run's catcher, and the mails its steps opened (never opened twice)."""

    address: str
    catcher: Catcher
    opened: set[str] = field(default_factory=set)

    async def wait(self, wanted: Email, timeout_s: float) -> Mail:
        """The newest mail to this address that matches and was not opened before, as it arrives (within
        `timeout_s`); MailNotFound saying which other mails came."""
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                mails = await self.catcher.mails_to(self.address)
                fresh = [m for m in mails if m.id not in self.opened and matches(m, wanted)]
                if fresh:
                    self.opened.add(fresh[0].id)
                    return with_links(await self.catcher.read(fresh[0]))
            except CatcherError as e:
                raise MailNotFound(str(e)) from None
            if time.monotonic() >= deadline:
                raise MailNotFound(not_found(self.address, wanted, timeout_s, [m for m in mails if m.id not in self.opened]))
            await asyncio.sleep(min(POLL_S, max(0.0, deadline - time.monotonic())))

    async def close(self) -> None:
        await self.catcher.client.aclose()

    async def newest(self) -> Mail | None:
        """The newest mail to this address, opened or not (the agent's tool), or None."""
        mails = await self.catcher.mails_to(self.address)
        return with_links(await self.catcher.read(mails[0])) if mails else None


def for_the_agent(mail: Mail | None, address: str) -> str:
    """What the agent's read_mail tool answers: the mail's subject, sender, text and links (or that none came yet)."""
    if mail is None:
        return f"No mail has arrived at {address} yet."
    text = mail.text or html.unescape(re.sub(r"<[^>]+>", " ", mail.html))
    links = "".join(f"\n- {link}" for link in mail.links) or " none"
    return f"Subject: {mail.subject}\nFrom: {mail.sender}\nReceived: {mail.received}\n\n{text.strip()}\n\nLinks:{links}"


def not_found(address: str, wanted: Email, timeout_s: float, others: list[Mail]) -> str:
    """no mail to A with subject 'S' in 30 s (2 other mails arrived: 'Verify your email', 'Hi')."""
    sender = f" from {wanted.sender!r}" if wanted.sender else ""
    said = f"no mail to {address} with subject {wanted.subject!r}{sender} in {timeout_s:g} s"
    if not others:
        return said + " (no other mail arrived)"
    subjects = ", ".join(repr(m.subject) for m in others[:3]) + (", …" if len(others) > 3 else "")
    return said + f" ({len(others)} other mail{'s' if len(others) > 1 else ''} arrived: {subjects})"


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        href = dict(attrs).get("href")
        if tag == "a" and href and href.startswith(("http://", "https://")):
            self.found.append(href)


def with_links(mail: Mail) -> Mail:
    """The mail with its links: its HTML part's, else the URLs in its text."""
    parser = _Links()
    parser.feed(mail.html)
    found = parser.found or re.findall(r"https?://[^\s<>\"')\]]+", mail.text)
    return replace(mail, links=list(dict.fromkeys(found)))


def tokens(mail: Mail) -> dict[str, str]:
    """The one-time codes and link tokens a mail holds, as secrets of the run (placeholder name -> value): each link's
    query values and last path segment long enough to be one, and each code in its text (a run of capitals and digits
    with a digit in it: 482913, K7Q-2ZD)."""
    found: dict[str, str] = {}
    for link in mail.links:
        parts = urlsplit(link)
        segment = parts.path.rstrip("/").rsplit("/", 1)[-1]
        values = [v for _, v in parse_qsl(parts.query)] + ([segment] if re.search(r"\d", segment) else [])
        for value in values:
            if len(value) >= TOKEN_MIN and not value.startswith(("http://", "https://")):
                found[f"mail-link-token-{len(found) + 1}"] = value
    text = mail.text + " " + re.sub(r"<[^>]+>", " ", mail.html)  # both parts: a code may be in one of them only
    for code in CODE.findall(html.unescape(text)):
        if len(code.replace("-", "")) >= TOKEN_MIN and code not in found.values():
            found[f"mail-code-{len(found) + 1}"] = code
    return found


def page(mail: Mail) -> str:
    """The document the mail opens as: its HTML part, else its text, with its subject and sender above it."""
    head = (
        f"<meta charset='utf-8'><title>{html.escape(mail.subject)}</title>"
        f"<p style='font:13px sans-serif;color:#555'>From {html.escape(mail.sender)} · {html.escape(mail.subject)}</p><hr>"
    )
    if mail.html:
        return head + mail.html
    return head + f"<pre style='white-space:pre-wrap'>{_linked(mail.text)}</pre>"


def _linked(text: str) -> str:
    """A text part with its URLs as links, so that a step can click them as it would in a mail client."""
    out, done = [], 0
    for m in re.finditer(r"https?://[^\s<>\"')\]]+", text):
        url = html.escape(m.group(0))
        out += [html.escape(text[done : m.start()]), f"<a href='{url}'>{url}</a>"]
        done = m.end()
    return "".join(out) + html.escape(text[done:])


def addressed(step: TestStep, address: str) -> TestStep:
    """The step with <inbox> in its goal or fill value as the test's address."""
    if step.do is not None and INBOX in step.do:
        return step.model_copy(update={"do": step.do.replace(INBOX, address)})
    if step.fill is not None and INBOX in step.fill.value:
        return step.model_copy(update={"fill": step.fill.model_copy(update={"value": step.fill.value.replace(INBOX, address)})})
    return step


def readdressed(value: object, address: str) -> object:
    """A recording's JSON with the address of the run it was recorded in replaced by this run's (every string)."""
    if isinstance(value, str):
        return ADDRESS.sub(address, value)
    if isinstance(value, dict):
        return {k: readdressed(v, address) for k, v in value.items()}
    if isinstance(value, list):
        return [readdressed(v, address) for v in value]
    return value
