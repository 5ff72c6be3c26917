"""The final page judged as the user ends up with it: settle first (a navigation meanwhile is followed), then the
checks, sharing one bound (expect.timeout); what settling waited for is an event and reaches a failed check's reason.
An absence (`not_text`) holds only on a page whose content has rendered and still shows."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING

from preview_qa.agent.page.checks import check_page
from preview_qa.agent.page.settle import PageSettler, Settled
from preview_qa.events import Observed
from preview_qa.manifest.models import Expectations, TestSpec
from preview_qa.results import ExpectationOutcome

if TYPE_CHECKING:
    from playwright.async_api import Page

ABSENCES = frozenset({"not_text"})  # checks that hold when something is missing: never on a page showing nothing
NOTHING_SHOWN = (
    "the page shows no content (nothing in its <main>, or its body, when the wait ended): an absence is judged "
    "only on a page whose content has rendered"
)


async def settle(spec: TestSpec, page: Page, settler: PageSettler, bound_s: float, emit: Callable[[Observed], None]) -> Settled:
    """Wait for the page to settle (at most `bound_s`), and say in a `settled` event how long and for what."""
    settled = await settler.settle(page, bound_s)
    emit(settled.detail().observed(spec.name))
    return settled


async def check_settled_page(
    expect: Expectations, page: Page, settler: PageSettler, settled: Settled, wait_s: float
) -> list[ExpectationOutcome]:
    """The page checks (the test's, or a step's), with what is left of the bound once settling took its share; a failed
    check says what the page settled from (the request it waited for, where it moved)."""
    outcomes = await check_page(expect, page, max(0.0, wait_s - settled.waited_s))
    if any(o.check in ABSENCES and o.ok for o in outcomes) and not await _shows_content(page, settler, settled):
        outcomes = [o.model_copy(update={"ok": False, "found": NOTHING_SHOWN}) if o.check in ABSENCES else o for o in outcomes]
    # Each reports the bound it shared with settling (expect.timeout, unless the test's deadline came first), not what
    # settling left of it: the declared figure, whatever share settling took on a busy machine.
    outcomes = [o if o.timeout_s is None else o.model_copy(update={"timeout_s": round(wait_s, 2)}) for o in outcomes]
    if not settled.waited_for and not settled.moved and settled.to_url == settled.from_url:
        return outcomes
    note = f"; before the checks, settling {settled.line()}"
    return [o if o.ok else o.model_copy(update={"found": o.found + note}) for o in outcomes]


async def _shows_content(page: Page, settler: PageSettler, settled: Settled) -> bool:
    """Whether the page's main content shows now; as settling last saw it when the page cannot be read."""
    look = await settler.look(page)
    return look.shown if look is not None else settled.rendered is not False


async def checks_at_once(expect: Expectations, page: Page) -> list[ExpectationOutcome] | None:
    """The page checks on `page`, each looked at once, without waiting for it to hold (--prove: which checks already
    held before the test's first action); None when the page could not be checked."""
    with contextlib.suppress(Exception):
        return await check_page(expect, page, 0.0)
    return None
