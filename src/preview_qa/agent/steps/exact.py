"""The exact steps of a test written as steps (open, click, fill, select, press, email), by Playwright alone: each
finds exactly one element, as `expect.element` does, waits up to the step's expect.timeout for it to be there and
actionable, and says in one line why it could not act. A `fill` of a secret types its value (a TOTP seed's current
code) by code, once the action guard has checked where it goes, exactly as for the agent's typing. An `email` opens
the test's newest matching mail as a sandboxed page of its own (no script, no request but its links)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from preview_qa.agent.guards.network import ActionGuard
from preview_qa.agent.steps.missing import instead, several
from preview_qa.events import Observed
from preview_qa.inbox.mail import POLICY, Mailbox, MailNotFound, tokens
from preview_qa.inbox.mail import page as mail_page
from preview_qa.manifest.models import TestSpec
from preview_qa.manifest.steps import WHOLE_SECRET, Email, Located, Press, StepKind, TestStep
from preview_qa.results import error_line
from preview_qa.secrets.totp import typed_value

if TYPE_CHECKING:
    from playwright.async_api import Locator, Page

POLL_S = 0.1  # between two counts of the elements a locator finds, as Playwright's own expect retries
TYPED_INTO_MS = 5000  # to read which document a secret goes into: 1 s ran out at load 20 (the fill refused, "unknown place")
TAB_WAIT_S = 1.0  # after a click, for a tab it opened to appear
MAIL_ORIGIN = "http://mail.preview-qa.invalid"  # where an opened mail's page is served from (by a route: no network)
# How a <select> names the option: "label" (its text, as Playwright's label= matches it), "value", or null; its options
OPTION_BY = """(s, o) => { const all = [...(s.options || [])];
  const by = all.some(x => x.label === o) ? "label" : all.some(x => x.value === o) ? "value" : null;
  return [by, all.map(x => x.label)]; }"""


class ActionFailed(Exception):
    """An exact step that could not act, and why, in one line."""


@dataclass(frozen=True)
class ExactTools:
    """What an exact step needs of its test: where paths lead, the secrets' values, the guard, and who hears an action
    before it runs (settling, and the evidence naming the action a server error follows)."""

    base_url: str
    spec: TestSpec
    secrets: dict[str, str]
    guard: ActionGuard
    acting: Callable[[dict[str, Any], dict[str, Any] | None], None]
    mail: MailTools | None = None  # the manifest has an inbox


@dataclass(frozen=True)
class MailTools:
    """The test run's mailbox, how a mail's codes and tokens become secrets of the run, and where its event goes."""

    mailbox: Mailbox
    learn: Callable[[dict[str, str]], None]
    emit: Callable[[Observed], None]


async def act(step: TestStep, page: Page, tools: ExactTools, timeout_s: float) -> Page:
    """Carry out the exact step on `page` within `timeout_s`; the page to go on with (a tab the click opened), or
    ActionFailed."""
    deadline = time.monotonic() + timeout_s
    match step.kind:
        case StepKind.OPEN:
            assert step.open is not None
            await _open(page, step.open, tools, _expected_status(step, tools.spec))
        case StepKind.CLICK:
            assert step.click is not None
            return await _click(page, await _one(page, step.click, deadline), step.click, tools, deadline)
        case StepKind.FILL:
            assert step.fill is not None
            target = await _one(page, step.fill, deadline)
            text = await _value(step.fill.value, target, tools)
            tools.acting({"input": {"text": step.fill.value}}, _facts(step.fill))
            await _acting(target.fill(text, timeout=_ms(deadline)), step.fill.described(), deadline)
        case StepKind.SELECT:
            assert step.select is not None
            target = await _one(page, step.select, deadline)
            tools.acting({"select_dropdown": {"text": step.select.option}}, _facts(step.select))
            await _select(target, step.select.option, step.select.described("list"), deadline)
        case StepKind.PRESS:
            assert step.press is not None
            await _press(page, step.press, tools, deadline)
        case StepKind.EMAIL:
            assert step.email is not None
            await _email(page, step.email, tools)
    return page


async def _email(page: Page, wanted: Email, tools: ExactTools) -> None:
    """Wait for the mail, then open it on `page`, served by a route with a policy that runs no script and loads
    nothing (a remote image, a tracking pixel) but lets its links be followed; its codes and tokens are secrets from
    now on, so the step's screenshot masks them and every output redacts them."""
    if tools.mail is None:
        raise ActionFailed("an email step needs the manifest's inbox: {maildev: URL} or {mailpit: URL}")
    try:
        mail = await tools.mail.mailbox.wait(wanted, wanted.timeout)
    except MailNotFound as e:
        raise ActionFailed(str(e)) from None
    tools.mail.learn(tokens(mail))
    detail = {"address": tools.mail.mailbox.address, "subject": mail.subject, "from": mail.sender, "links": mail.links}
    tools.mail.emit(Observed(name=tools.spec.name, kind="mail", error=False, detail={**detail, "received": mail.received}))
    url, body = f"{MAIL_ORIGIN}/{quote(mail.id, safe='')}", mail_page(mail)
    headers = {"content-type": "text/html; charset=utf-8", "content-security-policy": POLICY, "cache-control": "no-store"}

    async def serve(route: Any) -> None:
        await route.fulfill(status=200, headers=headers, body=body)

    await page.route(url, serve)
    tools.acting({"navigate": {"url": url}}, None)
    try:
        await page.goto(url, wait_until="load", timeout=0)  # the test's own timeout bounds it
    except Exception as e:
        raise ActionFailed(f"could not open the mail {mail.subject!r}: {error_line(e)}") from None


def _expected_status(step: TestStep, spec: TestSpec) -> int | None:
    """The HTTP status the `open` must answer (expect.status): the step's own, or the test's when this is its last
    step (a 403 a member is meant to get); None: any status below 400."""
    last = spec.steps is not None and spec.steps[-1] is step
    return step.expect.status if step.expect.status is not None else spec.expect.status if last else None


async def _open(page: Page, where: str, tools: ExactTools, expected: int | None) -> None:
    """Go to `where`; it must answer `expected` when the test says which status (expect.status), else below 400: a
    page a check would read on a 4xx answer (its nav, its words) never passes for the page asked for."""
    url = where if "://" in where else tools.base_url.rstrip("/") + where
    tools.acting({"navigate": {"url": url}}, None)
    try:
        response = await page.goto(url, wait_until="load", timeout=0)  # the test's own timeout bounds it
    except Exception as e:
        raise ActionFailed(f"could not open {where}: {error_line(e)}") from None
    status = response.status if response is not None else None
    if expected is not None and status != expected:
        raise ActionFailed(f"opening {where} answered HTTP {status}, expected {expected} (expect.status)")
    if expected is None and status is not None and status >= 400:
        raise ActionFailed(f"opening {where} answered HTTP {status}")


async def _click(page: Page, target: Locator, at: Located, tools: ExactTools, deadline: float) -> Page:
    """Click; a tab the click opened is where the next step goes on, as a replay follows one."""
    before = list(page.context.pages)
    tools.acting({"click": {}}, _facts(at))
    await _acting(target.click(timeout=_ms(deadline)), at.described(), deadline)
    waited = time.monotonic() + TAB_WAIT_S
    while time.monotonic() < waited and len(page.context.pages) == len(before):
        await asyncio.sleep(POLL_S / 2)
    opened = [p for p in page.context.pages if p not in before and not p.is_closed()]
    return opened[0] if opened else page


async def _select(target: Locator, option: str, what: str, deadline: float) -> None:
    """The option by its text, else by its value: looked up first, so that an option given by its value does not wait
    out the step's timeout for a text no option has (Datasette's `<option value="exact">=</option>`)."""
    by, options = "label", []
    with contextlib.suppress(Exception):
        by, options = await target.evaluate(OPTION_BY, option, timeout=_ms(deadline))
    if by is None:
        shown = ", ".join(repr(o) for o in options[:10]) + (", ..." if len(options) > 10 else "")
        raise ActionFailed(f"{what} has no option {option!r} (by its text or value); its options: {shown or 'none'}")
    chosen = target.select_option(label=option, timeout=_ms(deadline)) if by == "label" else None
    chosen = chosen or target.select_option(value=option, timeout=_ms(deadline))
    await _acting(chosen, f"the option {option!r} of {what}", deadline)


async def _press(page: Page, press: Press, tools: ExactTools, deadline: float) -> None:
    if not press.given:
        tools.acting({"send_keys": {"keys": press.key}}, None)
        await _acting(page.keyboard.press(press.key), f"the key {press.key}", deadline)
        return
    target = await _one(page, press, deadline)
    tools.acting({"send_keys": {"keys": press.key}}, _facts(press))
    await _acting(target.press(press.key, timeout=_ms(deadline)), press.described(), deadline)


async def _value(value: str, target: Locator, tools: ExactTools) -> str:
    """The text a fill types: literal, or a secret's value; either once the guard allows the document it goes into
    (it looks only at a text that carries a secret)."""
    secret = WHOLE_SECRET.fullmatch(value)
    name = tools.spec.agent_placeholder(secret.group(1)) if secret is not None else None  # a TOTP seed: its 2FA name
    if secret is not None and name not in tools.secrets:
        raise ActionFailed(f"the secret {secret.group(1)!r} is not set in this run")

    async def typed_into() -> str:
        with contextlib.suppress(Exception):
            return str(await target.evaluate("e => e.ownerDocument.location.href", timeout=TYPED_INTO_MS))
        return ""

    refused = await tools.guard.refusal({"input": {"text": value if name is None else f"<secret>{name}</secret>"}}, typed_into)
    if refused is not None:
        raise ActionFailed(refused)
    return value if name is None else typed_value(name, tools.secrets[name])


def locator(page: Page, at: Located) -> Locator:
    """Playwright's locator for the element: by role and name (hidden ones left out, as get_by_role and expect.element
    do), or the shown ones with this label, text, CSS selector or test id."""
    if at.role is not None:
        return page.get_by_role(at.role, name=at.name, exact=at.exact)  # type: ignore[arg-type]
    if at.label is not None:
        found = page.get_by_label(at.label, exact=at.exact)
    elif at.css is not None:
        found = page.locator(at.css)
    elif at.test_id is not None:
        found = page.get_by_test_id(at.test_id)
    else:
        found = page.get_by_text(at.text or "", exact=at.exact)
    return found.filter(visible=True)


async def _one(page: Page, at: Located, deadline: float) -> Locator:
    """The one element the step acts on, waiting (until `deadline`) while there is none or several."""
    found = locator(page, at)
    while True:
        count = await _count(found)
        if count == 1:
            return found
        if time.monotonic() >= deadline:
            if count == 0:
                near = await instead(page, at)
                raise ActionFailed(f"no element matches {at.described()}" + (f"; {near}" if near else ""))
            raise ActionFailed(f"{count} elements match {at.described()}: {await several(page, at)}")
        await asyncio.sleep(POLL_S)


async def _count(found: Locator) -> int:
    with contextlib.suppress(Exception):  # the page is navigating: nothing to count yet
        return await found.count()
    return 0


async def _acting(action: Awaitable[object], what: str, deadline: float) -> None:
    """Run Playwright's action, which waits for its element to be actionable; why it could not, in one line."""
    try:
        await action
    except Exception as e:
        raise ActionFailed(f"{what} could not be used: {_why(e)}") from None


def _why(error: Exception) -> str:
    """Playwright's last reason from its call log (`element is not enabled`), else its first line."""
    lines = [line.strip(" -") for line in str(error).splitlines()]
    reasons = [line for line in lines if line.startswith("element ")]
    if reasons:
        return f"{reasons[-1]} (waited {lines[0].split('Timeout ')[-1].split(' ')[0]})" if "Timeout" in lines[0] else reasons[-1]
    return error_line(lines[0] if lines else error)


def _facts(at: Located) -> dict[str, Any]:
    """The element as a step's record names it, for the evidence (a server error `after` it)."""
    role = at.role or ("field" if at.label is not None else "text" if at.text is not None else "element")
    return {"role": role, "name": at.name or at.label or at.text or at.css or at.test_id or ""}


def _ms(deadline: float) -> float:
    """What is left until `deadline`, in Playwright's milliseconds (at least 1: 0 would wait forever)."""
    return max(1.0, (deadline - time.monotonic()) * 1000)
