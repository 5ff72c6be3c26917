"""The final page judged as the user ends up with it: settle first (a navigation meanwhile is followed), then the
checks, sharing one bound (expect.timeout); what settling waited for is an event and reaches a failed check's reason.
An absence (`not_text`) holds only on a page whose content has rendered and still shows."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING

from preview_qa.agent.page.checks import check_page
from preview_qa.agent.page.settle import PageSettler, Settled
from preview_qa.agent.page.shown import ClosedRoots, shown_text, why_hidden
from preview_qa.events import Observed
from preview_qa.manifest.models import Expectations, TestSpec
from preview_qa.manifest.steps import StepKind
from preview_qa.results import ExpectationOutcome
from preview_qa.verdict.agent_run import AgentRun
from preview_qa.verdict.checks.url import unmoved
from preview_qa.verdict.decide import parse_report
from preview_qa.verdict.quotes import PagesShown, ShownText, look_up

if TYPE_CHECKING:
    from playwright.async_api import Page

    from preview_qa.agent.page.sightings import Sightings

ABSENCES = frozenset({"not_text", "not_appeared"})  # hold when something is missing: never on a page showing nothing
CLOSED_ROOT = "on the final page, in a closed shadow root"  # where a quote the record could not read was found
NOTHING_SHOWN = (
    "the app never rendered: its page shows nothing a person could see (no text outside <style> and <script>, no "
    "image, canvas or field in its <main>, or its body, when the wait ended), and an absence is judged only on a page "
    "whose content has rendered"
)


async def settle(spec: TestSpec, page: Page, settler: PageSettler, bound_s: float, emit: Callable[[Observed], None]) -> Settled:
    """Wait for the page to settle (at most `bound_s`), and say in a `settled` event how long and for what."""
    settled = await settler.settle(page, bound_s)
    emit(settled.detail().observed(spec.name))
    return settled


async def check_settled_page(
    expect: Expectations,
    page: Page,
    settler: PageSettler,
    settled: Settled,
    wait_s: float,
    sightings: Sightings | None = None,
    final: bool = True,
) -> list[ExpectationOutcome]:
    """The page checks (the test's, or a step's), with what is left of the bound once settling took its share; a failed
    check says what the page settled from (the request it waited for, where it moved). appeared/not_appeared judge
    what the pages showed since the last action that changed them (`sightings`)."""
    if sightings is not None and final:
        sightings.ending = True  # what shows from here on shows on the final page
    outcomes = await check_page(expect, page, max(0.0, wait_s - settled.waited_s), sightings)
    if any(o.check in ABSENCES and o.ok for o in outcomes) and not await _shows_content(page, settler, settled):
        outcomes = [o.model_copy(update={"ok": False, "found": NOTHING_SHOWN}) if o.check in ABSENCES else o for o in outcomes]
    # Each reports the bound it shared with settling (expect.timeout, unless the test's deadline came first), not what
    # settling left of it: the declared figure, whatever share settling took on a busy machine.
    outcomes = [o if o.timeout_s is None else o.model_copy(update={"timeout_s": round(wait_s, 2)}) for o in outcomes]
    if not settled.waited_for and not settled.moved and settled.to_url == settled.from_url:
        return outcomes
    note = f"; before the checks, settling {settled.line()}"
    return [o if o.ok else o.model_copy(update={"found": o.found + note}) for o in outcomes]


async def ground_quotes(spec: TestSpec, run: AgentRun, page: Page, sightings: Sightings, redact: Callable[[str], str]) -> None:
    """What the run's pages showed (`sightings`, through `redact`), for the agent's quotes (verdict/quotes.py). For a
    quote they never showed: the final page's closed shadow roots, which the record cannot read; why no one can see it
    on the final page, if it is there; and the final page's text in page order (a look or two a quote, only then)."""
    run.shown = shown = sightings.shown(redact)
    quotes = reported_quotes(spec, run)
    if not quotes or not shown.read:
        return
    missing = [quote for quote, check in zip(quotes, look_up(quotes, shown), strict=True) if not check.found]
    if missing:
        await _closed_roots_shown(page, sightings, missing, shown, redact)
        missing = [quote for quote, check in zip(quotes, look_up(quotes, shown), strict=True) if not check.found]
    for quote in missing:
        if (why := await why_hidden(page, quote)) is not None:
            run.quote_notes[quote] = why
    if missing:
        with contextlib.suppress(Exception):  # else the lines in the order they came
            shown.final = [redact(line) for line in (await shown_text(page)).splitlines()]


async def _closed_roots_shown(
    page: Page, sightings: Sightings, quotes: list[str], shown: PagesShown, redact: Callable[[str], str]
) -> None:
    """The lines of the final page's closed shadow roots that hold one of `quotes`, added to what the pages showed."""
    closed = ClosedRoots(page, sightings.session(page))
    try:
        for quote in quotes:
            found = await closed.look(quote, shown=True)
            if found is not None and found.get("hit"):
                shown.texts.append(ShownText(redact(str(found["hit"]["text"])), CLOSED_ROOT))
    finally:
        await closed.close()


def reported_quotes(spec: TestSpec, run: AgentRun) -> list[str]:
    """The quotes of the agent's valid reports: a task's, or each goal's of a test written as steps."""
    goals = [(spec.goal(s.index), s.run.done) for s in run.step_runs if s.kind is StepKind.DO]
    reports = [(spec, run.done)] if spec.steps is None else goals
    parsed = [parse_report(each, done.text)[0] for each, done in reports if done is not None]
    return [quote for report in parsed if report is not None for quote in report.quotes]


async def _shows_content(page: Page, settler: PageSettler, settled: Settled) -> bool:
    """Whether the page's main content shows now; as settling last saw it when the page cannot be read."""
    look = await settler.look(page)
    return look.shown if look is not None else settled.rendered is not False


async def checks_at_once(expect: Expectations, page: Page) -> list[ExpectationOutcome] | None:
    """The page checks on `page`, each looked at once, without waiting for it to hold (--prove: which checks already
    held before the test's first action; a url check that could hold only by never leaving the page does not); None
    when the page could not be checked."""
    with contextlib.suppress(Exception):
        return unmoved(await check_page(expect, page, 0.0), expect.url, page.url, page.url)
    return None
