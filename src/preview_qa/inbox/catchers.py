"""The mail catchers a manifest's `inbox:` names, each by its own REST API: MailDev's `/api/email` (version 3) and
Mailpit's `/api/v1`. Each lists the mails to one address, newest first, as `Mail`s."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import quote

from preview_qa.manifest.models import Inbox

if TYPE_CHECKING:
    import httpx

HTTP_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class Mail:
    """One mail as the catcher keeps it: its parts, and who sent it to whom."""

    id: str
    subject: str
    sender: str  # "Name <address>", or the address alone
    to: list[str]
    received: str  # as the catcher dates it (ISO 8601)
    html: str = ""
    text: str = ""
    links: list[str] = field(default_factory=list)  # filled by mail.py's reading of the parts


class CatcherError(Exception):
    """The catcher did not answer as its API says, in one line."""


class Catcher(Protocol):
    url: str
    client: httpx.AsyncClient

    async def mails_to(self, address: str) -> list[Mail]:
        """Every mail to `address`, newest first (its parts, if the list has them)."""
        ...

    async def read(self, mail: Mail) -> Mail:
        """The mail with its HTML and text parts."""
        ...


def _sender(value: Any) -> str:
    """`Name <address>` from MailDev's [{address, name}] or Mailpit's {Address, Name}."""
    one = value[0] if isinstance(value, list) and value else value
    if not isinstance(one, dict):
        return ""
    address = str(one.get("address") or one.get("Address") or "")
    name = str(one.get("name") or one.get("Name") or "")
    return f"{name} <{address}>" if name else address


def _addresses(value: Any) -> list[str]:
    items = value if isinstance(value, list) else []
    return [str(i.get("address") or i.get("Address") or "").lower() for i in items if isinstance(i, dict)]


async def _get(client: httpx.AsyncClient, url: str) -> Any:
    import httpx

    try:
        response = await client.get(url)
    except httpx.HTTPError as e:
        raise CatcherError(f"the mail catcher at {url} did not answer: {type(e).__name__}: {e}") from None
    if response.status_code != 200:
        raise CatcherError(f"the mail catcher answered HTTP {response.status_code} to GET {url}")
    try:
        return response.json()
    except ValueError:
        raise CatcherError(f"the mail catcher's answer to GET {url} is not JSON: is it the right URL?") from None


@dataclass
class MailDev:
    """MailDev 3: GET /api/email?to.address=A lists the mails to A, oldest first, each with its html and text."""

    url: str
    client: httpx.AsyncClient

    async def mails_to(self, address: str) -> list[Mail]:
        found = await _get(self.client, f"{self.url}/api/email?to.address={quote(address)}")
        if not isinstance(found, list):
            raise CatcherError(f"MailDev's /api/email at {self.url} answered no list: is it MailDev 3?")
        mails = [
            Mail(
                id=str(m.get("id", "")),
                subject=str(m.get("subject") or ""),
                sender=_sender(m.get("from")),
                to=_addresses(m.get("to")),
                received=str(m.get("time") or m.get("date") or ""),
                html=str(m.get("html") or ""),
                text=str(m.get("text") or ""),
            )
            for m in found
            if isinstance(m, dict) and address.lower() in _addresses(m.get("to"))
        ]
        return sorted(mails, key=lambda m: m.received, reverse=True)

    async def read(self, mail: Mail) -> Mail:
        return mail  # MailDev's list has the parts


@dataclass
class Mailpit:
    """Mailpit: GET /api/v1/search?query=to:"A" lists summaries, newest first; GET /api/v1/message/ID has the parts."""

    url: str
    client: httpx.AsyncClient

    async def mails_to(self, address: str) -> list[Mail]:
        query = quote(f'to:"{address}"')
        found = await _get(self.client, f"{self.url}/api/v1/search?query={query}")
        summaries = found.get("messages") if isinstance(found, dict) else None
        if not isinstance(summaries, list):
            raise CatcherError(f"Mailpit's /api/v1/search at {self.url} answered no messages: is it Mailpit?")
        mails = []
        for m in summaries:
            if not isinstance(m, dict) or address.lower() not in _addresses(m.get("To")):
                continue
            subject, sender, created = str(m.get("Subject") or ""), _sender(m.get("From")), str(m.get("Created") or "")
            mails.append(Mail(str(m.get("ID", "")), subject, sender, _addresses(m.get("To")), created))
        return mails

    async def read(self, mail: Mail) -> Mail:
        message = await _get(self.client, f"{self.url}/api/v1/message/{quote(mail.id, safe='')}")
        if not isinstance(message, dict):
            raise CatcherError(f"Mailpit's /api/v1/message/{mail.id} at {self.url} answered no message")
        return replace(mail, html=str(message.get("HTML") or ""), text=str(message.get("Text") or ""))


def catcher(inbox: Inbox) -> Catcher:
    """The manifest's catcher, with a client of its own (the mailbox closes it)."""
    import httpx  # a run without an inbox never loads it (nor does a run's start)

    client = httpx.AsyncClient(timeout=HTTP_TIMEOUT_S)
    return MailDev(inbox.url, client) if inbox.maildev is not None else Mailpit(inbox.url, client)
