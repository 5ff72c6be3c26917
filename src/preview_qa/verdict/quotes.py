"""Pure: the agent's quotes looked up in what the run's pages showed a person, and what a pass rests on.

A pass is grounded when the page checks of its own (`Expectations.has_page_checks`) held, or when every text the
agent quoted as evidence was shown by a page of the run. A quote shown nowhere fails the test (unless it could have
been read off a picture: then the pass is unverified); a pass with neither quotes nor checks of its own stands on the
agent's word alone and is unverified. Only the report's structured `quotes` are read, never its prose, and only ever
to fail closed."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

from preview_qa.manifest.models import TestSpec
from preview_qa.results import QuoteCheck, clip, one_line

AGENT_WORD = "on the agent's word"  # how every reporter marks a pass that rests on nothing else
QUOTE_LIMIT = 200  # characters of a quote said in a reason or kept in results.json
SHOWN_LIMIT = 120  # characters of what the final page shows, in a reason
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class ShownText:
    """Text a page of the run showed where a person could see it (redacted): lines that showed together, in order,
    and where (`after step 2, on /checkout`)."""

    text: str
    where: str


@dataclass
class PagesShown:
    """What the run's pages showed a person, read as they showed it (agent/page/sightings.py), secrets redacted."""

    texts: list[ShownText] = field(default_factory=list)
    final: list[str] = field(default_factory=list)  # the final page's lines, in order
    pictures: list[str] = field(default_factory=list)  # "a canvas after step 2, on /chart": text may be drawn there
    read: bool = False  # whether the pages could be read at all (a browser that would not let us: nothing to look in)
    complete: bool = True  # False when they showed more text than is kept: a quote not found may be in what was not


@dataclass(frozen=True)
class Grounding:
    """What a pass rests on: each quote looked up; `failed`: why the pass does not hold; `unverified`: why it stands
    on the agent's word (a pass that stays a pass, marked)."""

    quotes: list[QuoteCheck]
    failed: str | None = None
    unverified: str | None = None


def fold_quote(text: str) -> str:
    """Text as a quote is compared: compatibility forms unified (nbsp, full-width, ligatures), case folded, every
    punctuation mark (quotes, dashes, '…', ':' ...) a space, white space folded; words, digits and symbols stay."""
    normal = unicodedata.normalize("NFKC", text).casefold()
    spaced = "".join(" " if unicodedata.category(c).startswith("P") else c for c in normal)
    return _SPACE.sub(" ", spaced).strip()


def quoted_in(quote: str, text: str) -> bool:
    """Whether `text` shows `quote` as whole words, by fold_quote: 'Signed in as: demo' is in 'Signed in as demo', but
    'Order confirmed' is not in 'Order not confirmed', nor 'confirmed' in 'unconfirmed'."""
    wanted = fold_quote(quote)
    return bool(wanted) and f" {wanted} " in f" {fold_quote(text)} "


def look_up(quotes: list[str], shown: PagesShown) -> list[QuoteCheck]:
    """Each quote, and where a page of the run first showed it (None: nowhere)."""
    checks = []
    for quote in quotes:
        where = next((s.where for s in shown.texts if quoted_in(quote, s.text)), None)
        checks.append(QuoteCheck(quote=clip(one_line(quote, QUOTE_LIMIT * 2), QUOTE_LIMIT), found=where is not None, where=where))
    return checks


def grounding(spec: TestSpec, quotes: list[str], shown: PagesShown, notes: dict[str, str] | None = None) -> Grounding:
    """What a pass with these quotes rests on. `notes`: for a quote shown nowhere, why no one could see it on the final
    page (agent/page/shown.js's explain), when it is there."""
    quotes = [q for q in quotes if q]  # a blank quote cites nothing
    checks = look_up(quotes, shown) if shown.read else [QuoteCheck(quote=clip(q, QUOTE_LIMIT), found=False) for q in quotes]
    if not quotes:
        if spec.expect.has_page_checks:
            return Grounding(checks)
        return Grounding(checks, unverified=f"{AGENT_WORD}: it quoted nothing from the page, and the test has no page check")
    if not shown.read:
        return Grounding(checks, unverified=f"{AGENT_WORD}: the run's pages could not be read to look its quotes up")
    missing = [(q, c) for q, c in zip(quotes, checks, strict=True) if not c.found]
    if not missing:
        return Grounding(checks)
    hidden = [(q, c, (notes or {})[q]) for q, c in missing if (notes or {}).get(q)]
    if hidden:  # the agent read text no one can see: whatever else the pages showed, that is no evidence
        _, check, why = hidden[0]
        cited = f"the agent cited {check.quote!r}, which no page of this run showed where a person could see it"
        return Grounding(checks, failed=f"{cited}: it is in the final page, but no one can see it: {why}")
    check = missing[0][1]
    cited = f"the agent cited {check.quote!r}, which no page of this run showed"
    if shown.pictures or not shown.complete:
        where = f"it may have read it off a picture ({shown.pictures[0]})" if shown.pictures else "more text showed than was kept"
        return Grounding(checks, unverified=f"{AGENT_WORD}: {cited} as text; {where}")
    return Grounding(checks, failed=f"{cited}; {final_page_line(shown)}")


def final_page_line(shown: PagesShown) -> str:
    """`the final page shows 'Payment declined …'`, or that it shows no text."""
    if not shown.final:
        return "the final page shows no text"
    return f"the final page shows {clip(' · '.join(shown.final), SHOWN_LIMIT)!r}"


def shows_text(line: str, text: str) -> bool:
    """A text check's rule (as Playwright's get_by_text, and agent/page/shown.js): case ignored, white space folded,
    anywhere in the line."""
    return " ".join(text.split()).lower() in " ".join(line.split()).lower()
