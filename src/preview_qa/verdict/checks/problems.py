"""Pure: the problems a run saw on the app's pages (uncaught exceptions, console errors, failed requests) and the final
page's links, requested -> the outcomes of expect.console_errors, expect.requests and expect.links; and the problems a
test's result keeps for a later comparison."""

from __future__ import annotations

from fnmatch import fnmatchcase
from urllib.parse import urlsplit

from preview_qa.manifest.models import Expectations, RequestsCheck
from preview_qa.results import ExpectationOutcome, PageProblem, ProblemKind, clip
from preview_qa.verdict.agent_run import AgentRun, LinkAnswer

PROBLEMS_KEPT = 50  # in a test's result; past this, counted in its problems_left_off
SHOWN = 3  # problems a failed check's found names; the rest are counted
MESSAGE_SHOWN = 160
MESSAGES = (ProblemKind.PAGE_ERROR, ProblemKind.CONSOLE_ERROR)
REQUESTS = (ProblemKind.HTTP_ERROR, ProblemKind.BROKEN_IMAGE)


def problem_outcomes(
    expect: Expectations, problems: list[PageProblem], dropped: dict[ProblemKind, int], links: list[LinkAnswer] | None
) -> list[ExpectationOutcome]:
    """The outcome of each problem check the test declares, in the order console_errors, requests, links. `links`
    None with expect.links set: they were not requested, which fails (an unchecked page is no pass)."""
    outcomes = []
    if expect.console_errors is not None:
        outcomes.append(console_outcome(problems, sum(dropped.get(k, 0) for k in MESSAGES)))
    if expect.requests is not None:
        outcomes.append(requests_outcome(expect.requests, problems, sum(dropped.get(k, 0) for k in REQUESTS)))
    if expect.links is not None:
        outcomes.append(links_outcome(links))
    return outcomes


def console_outcome(problems: list[PageProblem], dropped: int = 0) -> ExpectationOutcome:
    """Fails on any uncaught exception or console error seen on a page of the app; found names the first few, each
    with the page it was on."""
    seen = [p for p in problems if p.kind in MESSAGES]
    lines = [
        f"{'uncaught' if p.kind is ProblemKind.PAGE_ERROR else 'console error'} {clip(p.message, MESSAGE_SHOWN)!r} on {p.page}"
        for p in seen
    ]
    expected = "no uncaught exception or console error on a page of the app"
    return _outcome("console_errors", expected, lines, dropped)


def requests_outcome(wanted: RequestsCheck, problems: list[PageProblem], dropped: int = 0) -> ExpectationOutcome:
    """Fails on any same-origin request that answered 400 or above or failed to load, unless its path matches one of
    `wanted.allow` ('*' spans '/'); the same request again is counted, not repeated."""
    failed = [p for p in problems if p.kind in REQUESTS]
    counted = [p for p in failed if not any(fnmatchcase(p.target or "", glob) for glob in wanted.allow)]
    times: dict[str, int] = {}
    for p in counted:
        times[p.message] = times.get(p.message, 0) + 1
    lines = [f"{message} ({n} times)" if n > 1 else message for message, n in times.items()]
    allowed = len(failed) - len(counted)
    outcome = _outcome("requests", "no failed request to the app's origin", lines, dropped)
    if allowed:
        outcome = outcome.model_copy(update={"found": f"{outcome.found} ({allowed} allowed, not counted)"})
    return outcome


def broken(answer: LinkAnswer) -> bool:
    return answer.failure is not None or answer.status is None or answer.status >= 400


def link_line(answer: LinkAnswer, path: str | None = None) -> str:
    """`link 'Team' to /team answered 404`, or why it gave no answer; to `path` instead of the link's own (a result's
    problem names no query)."""
    name = f"link {clip(answer.text, 60)!r}" if answer.text else "a link without text"
    what = answer.failure or f"answered {answer.status}"
    return f"{name} to {path or answer.path} {what}"


def links_outcome(links: list[LinkAnswer] | None) -> ExpectationOutcome:
    """Fails on any link that answered 400 or above or gave no answer (a timeout is no pass), and when the links could
    not be requested at all."""
    if links is None:
        expected = "no broken link to the app's own pages on the final page"
        return ExpectationOutcome(check="links", expected=expected, found="the links were not requested", ok=False)
    expected = f"no broken link among the final page's {len(links)} link(s) to the app's own pages"
    return _outcome("links", expected, [link_line(a) for a in links if broken(a)], 0)


def _outcome(check: str, expected: str, lines: list[str], dropped: int) -> ExpectationOutcome:
    total = len(lines) + dropped
    if not total:
        return ExpectationOutcome(check=check, expected=expected, found="none", ok=True)
    more = total - min(SHOWN, len(lines))
    if not lines:  # all of them past the evidence's bound: counted, never a pass
        return ExpectationOutcome(check=check, expected=expected, found=f"{total} (too many to keep)", ok=False)
    found = f"{total}: " + "; ".join(lines[:SHOWN]) + (f"; and {more} more" if more else "")
    return ExpectationOutcome(check=check, expected=expected, found=found, ok=False)


def kept_problems(run: AgentRun) -> tuple[list[PageProblem], int]:
    """The problems a test's result keeps (its broken links too, when expect.links ran), at most PROBLEMS_KEPT, and how
    many more were seen."""
    page = urlsplit(run.final_url or "").path or "/"
    links = [
        PageProblem(kind=ProblemKind.BROKEN_LINK, page=page, target=path, status=a.status, message=link_line(a, path))
        for a in run.links or []
        if broken(a) and (path := urlsplit(a.path).path or "/")
    ]
    every = [*run.problems, *links]
    return every[:PROBLEMS_KEPT], max(0, len(every) - PROBLEMS_KEPT) + sum(run.problems_dropped.values())
