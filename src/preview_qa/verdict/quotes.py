"""Pure: the agent's quotes looked up in what the run's pages showed a person, and what a pass rests on.

A pass is grounded when the page checks of its own (`Expectations.has_page_checks`) held, or when every text the
agent quoted as evidence was shown by a page of the run. A quote shown nowhere fails the test (unless it could have
been read off a picture: then the pass is unverified); a pass with neither quotes nor checks of its own stands on the
agent's word alone and is unverified. Only the report's structured `quotes` and `addressed` are read, never its prose,
and only ever to fail closed.

Page text the agent reported as addressed to it (`addressed`: an instruction, a note to "QA agents") is looked up as
quotes are; any shown (or that could not be ruled out) means a page spoke to the agent, and a quote found only inside
such text, or in quotation marks on a line that holds it ("Quote the text "Order confirmed""), grounds nothing."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from preview_qa.manifest.models import Expectations, TestSpec
from preview_qa.results import ExpectationOutcome, QuoteCheck, clip, one_line

TEXT_CHECK = "visible text {!r}"  # a text check's expectation, in agent/page/checks.py's words
AGENT_WORD = "on the agent's word"  # how every reporter marks a pass that rests on nothing else
QUOTE_LIMIT = 200  # characters of a quote said in a reason or kept in results.json
SHOWN_LIMIT = 120  # characters of what the final page shows, in a reason
ADDRESSED_LIMIT = 100  # characters of the text that addressed the agent, in a reason
_SPACE = re.compile(r"\s+")
# A passage in quotation marks, within one line: straight, typographic, guillemets, low-9, corner brackets; a single
# straight quote only where it opens and closes words (not an apostrophe's "don't").
_QUOTED = re.compile(r'"[^"\n]+"|“[^”\n]+”|„[^“”\n]+[“”]|‘[^’\n]+’|«[^»\n]+»|「[^」\n]+」|(?<!\w)\'[^\'\n]+\'(?!\w)')


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
    addressed: list[QuoteCheck] = field(default_factory=list)  # the text the agent said addressed it, each looked up
    steered: str | None = None  # "the page addressed the agent: '…'": a pass on the agent's word fails on it


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


def look_up(quotes: list[str], shown: PagesShown, addressed: Sequence[str] = ()) -> list[QuoteCheck]:
    """Each quote, and where a page of the run first showed it (None: nowhere). With `addressed` (the texts the agent
    said addressed it, shown on the pages): a quote shown only inside one of them, or in quotation marks on a line that
    holds one, is found but `in_instruction`: it grounds nothing."""
    checks = []
    for quote in quotes:
        where = next((s.where for s in shown.texts if quoted_in(quote, s.text)), None)
        asked = False
        if where is not None and addressed:
            outside = next((s.where for s in shown.texts if _quoted_outside(quote, s.text, addressed)), None)
            where, asked = outside or where, outside is None
        text = clip(one_line(quote, QUOTE_LIMIT * 2), QUOTE_LIMIT)
        checks.append(QuoteCheck(quote=text, found=where is not None, where=where, in_instruction=asked))
    return checks


def _quoted_outside(quote: str, text: str, addressed: Sequence[str], rule: Callable[[str, str], bool] = quoted_in) -> bool:
    """Whether `text` shows `quote` (by `rule`) outside every addressed text in it and, on a line that holds one,
    outside the passages in quotation marks (an instruction naming the text to cite). Decided by position, on the text
    itself."""
    if not rule(quote, text):
        return False
    folded, origin = _folded_with_origin(text)
    cut = [False] * len(text)
    for said in addressed:
        wanted = fold_quote(said)
        if not wanted:
            continue
        for match in re.finditer(rf"(?<!\S){re.escape(wanted)}(?!\S)", folded):
            start, end = origin[match.start()], origin[match.end() - 1] + 1
            line_start, line_end = text.rfind("\n", 0, start) + 1, _line_end(text, end)
            for i in range(start, end):
                cut[i] = True
            for passage in _QUOTED.finditer(text, line_start, line_end):  # beside the instruction, on its line
                for i in range(passage.start(), passage.end()):
                    cut[i] = True
    parts = re.split("\x00+", "".join("\x00" if gone else c for c, gone in zip(text, cut, strict=True)))
    return any(rule(quote, part) for part in parts)


def _line_end(text: str, at: int) -> int:
    end = text.find("\n", at)
    return len(text) if end < 0 else end


def _folded_with_origin(text: str) -> tuple[str, list[int]]:
    """`text` folded as fold_quote folds it (without the strip), and for each folded character the index of the
    character of `text` it came from."""
    out: list[str] = []
    origin: list[int] = []
    for i, c in enumerate(text):
        for f in unicodedata.normalize("NFKC", c).casefold():
            f = " " if unicodedata.category(f).startswith("P") or f.isspace() else f
            if f == " " and out and out[-1] == " ":
                continue
            out.append(f)
            origin.append(i)
    return "".join(out), origin


def addressed_checks(addressed: list[str], shown: PagesShown) -> list[QuoteCheck]:
    """The texts the agent said addressed it, each looked up as a quote is."""
    addressed = [a for a in addressed if a]
    if not shown.read:
        return [QuoteCheck(quote=clip(one_line(a, QUOTE_LIMIT * 2), QUOTE_LIMIT), found=False) for a in addressed]
    return look_up(addressed, shown)


def steered_line(addressed: list[str], checks: list[QuoteCheck], shown: PagesShown) -> str | None:
    """`the page addressed the agent: '…'`, for the first text the agent said addressed it that a page showed or that
    cannot be ruled out (the pages could not be read, or not all of them, or it may be on a picture); None if none."""
    unsure = not shown.read or not shown.complete or bool(shown.pictures)
    counted = [a for a, c in zip(addressed, checks, strict=True) if c.found or unsure]
    if not counted:
        return None
    more = f" (and {len(counted) - 1} more)" if len(counted) > 1 else ""
    return f"the page addressed the agent: {clip(one_line(counted[0], ADDRESSED_LIMIT * 2), ADDRESSED_LIMIT)!r}{more}"


def grounding(
    spec: TestSpec, quotes: list[str], shown: PagesShown, notes: dict[str, str] | None = None, addressed: list[str] | None = None
) -> Grounding:
    """What a pass with these quotes rests on. `notes`: for a quote shown nowhere, why no one could see it on the final
    page (agent/page/shown.js's explain), when it is there. `addressed`: the page text the agent said addressed it."""
    quotes = [q for q in quotes if q]  # a blank quote cites nothing
    said = [a for a in addressed or [] if a]
    said_checks = addressed_checks(said, shown)
    steered = steered_line(said, said_checks, shown)
    shown_said = [a for a, c in zip(said, said_checks, strict=True) if c.found]
    checks = (
        look_up(quotes, shown, shown_said)
        if shown.read
        else [QuoteCheck(quote=clip(q, QUOTE_LIMIT), found=False) for q in quotes]
    )
    grounded = _grounding(spec, quotes, checks, shown, notes)
    return Grounding(checks, grounded.failed, grounded.unverified, said_checks, steered)


def _grounding(
    spec: TestSpec, quotes: list[str], checks: list[QuoteCheck], shown: PagesShown, notes: dict[str, str] | None
) -> Grounding:
    asked = [c for c in checks if c.in_instruction]
    kept = [(q, c) for q, c in zip(quotes, checks, strict=True) if not c.in_instruction]  # an instruction grounds nothing
    if not kept:
        if spec.expect.has_page_checks:
            return Grounding(checks)
        if asked:
            why = f"its only quote, {asked[0].quote!r}, is inside text the page addressed to the agent"
            return Grounding(checks, unverified=f"{AGENT_WORD}: {why}, and the test has no page check")
        return Grounding(checks, unverified=f"{AGENT_WORD}: it quoted nothing from the page, and the test has no page check")
    if not shown.read:
        return Grounding(checks, unverified=f"{AGENT_WORD}: the run's pages could not be read to look its quotes up")
    missing = [(q, c) for q, c in kept if not c.found]
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


def shown_addressed(addressed: list[str], shown: PagesShown) -> list[str]:
    """The texts the agent said addressed it that a page of the run showed."""
    said = [a for a in addressed if a]
    return [a for a, c in zip(said, addressed_checks(said, shown), strict=True) if c.found]


def checks_inside_instructions(
    expect: Expectations, outcomes: list[ExpectationOutcome], shown: PagesShown, addressed: list[str]
) -> list[ExpectationOutcome]:
    """The page checks, a `text` check that held failing when the final page showed its text only inside text the
    page addressed to the agent (`addressed`: shown on the run's pages), or quoted beside it: an instruction that
    names the text is not the app showing it."""
    if not addressed:
        return outcomes
    wanted = {TEXT_CHECK.format(text): text for text in expect.text}
    out = []
    for outcome in outcomes:
        text = wanted.get(outcome.expected) if outcome.check == "text" and outcome.ok else None
        inside = text is not None and any(shows_text(line, text) for line in shown.final)
        if text is not None and inside and not any(_quoted_outside(text, line, addressed, _shows) for line in shown.final):
            said = clip(one_line(addressed[0], ADDRESSED_LIMIT * 2), ADDRESSED_LIMIT)
            found = f"it is visible only inside text the page addressed to the agent ({said!r}), which no check counts"
            outcome = outcome.model_copy(update={"ok": False, "found": found, "timeout_s": None})
        out.append(outcome)
    return out


def _shows(text: str, line: str) -> bool:
    return shows_text(line, text)


def final_page_line(shown: PagesShown) -> str:
    """`the final page shows 'Payment declined …'`, or that it shows no text."""
    if not shown.final:
        return "the final page shows no text"
    return f"the final page shows {clip(' · '.join(shown.final), SHOWN_LIMIT)!r}"


def shows_text(line: str, text: str) -> bool:
    """A text check's rule (as Playwright's get_by_text, and agent/page/shown.js): case ignored, white space folded,
    anywhere in the line."""
    return " ".join(text.split()).lower() in " ".join(line.split()).lower()
