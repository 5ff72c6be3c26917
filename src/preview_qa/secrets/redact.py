"""Replace secret values, in every form a URL, JSON, HTML or base64 gives them, with their `<secret>name</secret>`
placeholders; find which secret a text holds, by its name."""

from __future__ import annotations

import base64
import html
import json
import re
import types
from collections.abc import Mapping
from enum import Enum
from typing import Any, Literal, TypeVar, Union, get_args, get_origin
from urllib.parse import quote, quote_plus

from pydantic import BaseModel

from preview_qa.secrets.totp import TotpCodes, is_totp

Model = TypeVar("Model", bound=BaseModel)
MIN_SECRET_LENGTH = 6  # a shorter value cannot be told apart from ordinary text: redacting it would shred the output
API_KEY = "api-key"  # placeholder names of the run's own secrets; a manifest's names are identifiers, so never clash
HEADER = "header:"
BASIC_AUTH = "basic-auth-password"
GITHUB_TOKEN = "github-token"


def secret_length(value: str) -> int:
    """How long a value is as a secret: whitespace does not count (pages and our one-line texts fold it)."""
    return len("".join(value.split()))


def forms(value: str) -> list[str]:
    """The concrete encodings of `value` a page, URL or serialiser produces: raw, percent-encoded (quote and
    quote_plus, upper- and lower-case hex), JSON-escaped and HTML-escaped. `Redactor` matches more (any mix of
    these per character, double encodings); this list is what can be told to others (GitHub's masks, the browser)."""
    percent = [
        quote(value, safe="", errors="surrogatepass"),
        quote(value, errors="surrogatepass"),
        quote_plus(value, safe="/", errors="surrogatepass"),
        quote_plus(value, errors="surrogatepass"),
    ]
    lower = [re.sub(r"%[0-9A-F]{2}", lambda m: m.group(0).lower(), p) for p in percent]
    escaped = [
        json.dumps(value)[1:-1],
        json.dumps(value, ensure_ascii=False)[1:-1],
        html.escape(value),
        html.escape(value, quote=False),
    ]
    return list(dict.fromkeys([value, *percent, *lower, *escaped, *base64_forms(value)]))


def base64_forms(value: str) -> list[str]:
    """The part of `value`'s base64 (standard and URL-safe) that is the same wherever it sits in the encoded data: one
    form for each of the three byte alignments (0, 1 or 2 bytes before it in its group of three)."""
    data = value.encode("utf-8", "surrogatepass")
    found = []
    for before in range(3):
        encoded = base64.b64encode(b"\0" * before + data).decode("ascii").rstrip("=")
        core = encoded[-(-8 * before // 6) : (8 * (before + len(data))) // 6]  # only characters of `value`'s own bits
        found += [core, core.replace("+", "-").replace("/", "_")]
    return list(dict.fromkeys(found))


def describe(name: str) -> str:
    """A secret as a reason names it, never by its value: secret 'pw', the API key, the header NAME."""
    if name == API_KEY:
        return "the API key"
    if name == BASIC_AUTH:
        return "the basic-auth password"
    if name == GITHUB_TOKEN:
        return "the GitHub token"
    if name.startswith(HEADER):
        return f"the header {name.removeprefix(HEADER)}"
    return f"secret '{name}'"


def _char_forms(char: str) -> list[str]:
    """Regular expressions for one character in each of its encodings (matched case-insensitively)."""
    point = ord(char)
    units = [point] if point <= 0xFFFF else [0xD800 + ((point - 0x10000) >> 10), 0xDC00 + ((point - 0x10000) & 0x3FF)]
    # raw or as an HTML entity (numeric, or named for & < > " '), escaped once or twice
    in_html = [re.escape(char), rf"&(?:amp;)*#0*{point};", rf"&(?:amp;)*#x0*{point:X};"]
    named = html.escape(char)
    in_html += ["&(?:amp;)*" + re.escape(named[1:])] if named != char else []
    in_html += ["&(?:amp;)*apos;"] if char == "'" else []
    found = [
        *in_html,
        "".join(f"%(?:25)*{byte:02X}" for byte in char.encode("utf-8", "surrogatepass")),
        "".join(rf"\\+u{unit:04X}" for unit in units),
    ]  # percent-encoded (maybe twice); JSON (maybe in JSON)
    short = json.dumps(char)[1:-1]
    if char == "/" or (short.startswith("\\") and not short.startswith("\\u")):  # JSON's \" \\ \/ \n ...
        letter = short[1:] if char != "/" else "/"
        found.append(r"\\+(?:" + "|".join([re.escape(letter), *(in_html[1:] if letter == char else [])]) + ")")
    return found


_SPACE = [
    r"\s",
    r"\+",
    r"%(?:25)*(?:20|09|0A|0D)",
    r"\\+[ntr]",
    r"\\+u00A0",
    "&(?:amp;)*(?:nbsp|#160|#xA0);",
    r"&(?:amp;)*#(?:32|9|10|13);",
    r"&(?:amp;)*#x(?:20|9|A|D);",
]


class _Token:
    """One character of a secret (or one run of whitespace, which matches any run) as alternative patterns."""

    def __init__(self, text: str):
        self.repeats = text.isspace()  # pages and our one-line summaries fold whitespace
        forms = [f for c in text for f in [*_char_forms(c), *(_SPACE if self.repeats else [])]]
        self.alternatives = list(dict.fromkeys(forms))
        self.compiled = [re.compile(f, re.IGNORECASE) for f in self.alternatives]

    @property
    def regex(self) -> str:
        return "(?:" + "|".join(self.alternatives) + ")" + ("+" if self.repeats else "")

    def ends(self, text: str, starts: set[int]) -> set[int]:
        """Every position where this token can end when it starts at one of `starts` (each alternative, each repeat)."""
        found: set[int] = set()
        todo = set(starts)
        while todo:
            at = todo.pop()
            for alternative in self.compiled:
                match = alternative.match(text, at)
                if match is not None and match.end() > at and match.end() not in found:
                    found.add(match.end())
                    if self.repeats:
                        todo.add(match.end())
        return found


def _tokens(value: str) -> list[_Token]:
    return [_Token(run) for run in re.findall(r"\s+|\S", value)]


def pattern(value: str) -> re.Pattern[str]:
    """Matches `value` with each character in any of its forms; a run of whitespace matches any run; letters in any
    case (hex digits and entities differ in case between encoders)."""
    return re.compile("".join(t.regex for t in _tokens(value)), re.IGNORECASE)


CUT_MIN = 4  # characters of a secret's start, right before an ellipsis, that are redacted as if whole
# Where a text was cut: maybe inside an escape (`%2`, `\u00`, `&am`), then an ellipsis. (Only a marked cut: a string
# that merely ends like a secret begins, such as `attributes` for `test-key`, is ordinary text.)
_CUT = re.compile(r"(?:%(?:25)*[0-9A-F]?|\\+(?:u[0-9A-F]{0,3})?|&[#\w;]*)?(?=\.\.\.|\u2026)", re.IGNORECASE)


class _Secret:
    """One secret's patterns: the whole value in any form, and its start where a text was cut short."""

    def __init__(self, name: str, value: str):
        self.tokens = _tokens(value)
        self.name, self.placeholder = name, f"<secret>{name}</secret>"
        self.whole = re.compile("".join(t.regex for t in self.tokens), re.IGNORECASE)
        # base64 is case-sensitive, and a percent-encoded URL or form body spells its + / = as %2B %2F %3D
        self.encoded = re.compile(
            "|".join(
                re.escape(f).replace(r"\+", "(?:\\+|%2[Bb])").replace("/", "(?:/|%2[Ff])")
                for f in sorted(base64_forms(value), key=len, reverse=True)
            )
        )
        # a start inside a word is part of that word (`attribu-tes...`), unless the secret itself starts with a symbol
        boundary = r"(?<![^\W_])" if value[:1].isalnum() else ""
        self.start = re.compile(boundary + "".join(t.regex for t in self.tokens[:CUT_MIN]), re.IGNORECASE)

    def redact(self, text: str) -> str:
        text = self.encoded.sub(lambda _: self.placeholder, self.whole.sub(lambda _: self.placeholder, text))
        return self._cut_starts(text) if "..." in text or "\u2026" in text else text

    def _cut_starts(self, text: str) -> str:
        """A secret's first characters (CUT_MIN or more, in any form) where an ellipsis marks a cut right after them, as
        browser-use shortens long URLs (`?code=Quokka+Marm...1a2b3c4`) and every clipped message does (`…`)."""
        out, done, at = [], 0, 0
        while (found := self.start.search(text, at)) is not None:
            cut = self._cut_after(text, found.start())
            if cut is None:
                at = found.start() + 1
                continue
            out += [text[done : found.start()], self.placeholder]
            done = at = cut
        return "".join(out) + text[done:] if out else text

    def _cut_after(self, text: str, start: int) -> int | None:
        """Where the cut ends after the longest start of this secret at `start`, if a cut follows one."""
        ends, best = {start}, None
        for count, token in enumerate(self.tokens, 1):
            ends = token.ends(text, ends)
            if not ends:
                break
            if count >= CUT_MIN:
                cuts = [c.end() for end in ends if (c := _CUT.match(text, end)) is not None]
                best = max([*cuts, best or 0]) if cuts else best
        return best


class Redactor:
    """Knows every secret of a run; longest values first so a secret that contains another is replaced whole."""

    def __init__(self, secrets: Mapping[str, str]):
        self._given: list[str] = []  # every value as gathered, short ones too
        self._values: list[str] = []
        self._secrets: list[_Secret] = []
        self._totps: list[TotpCodes] = []  # a seed's codes change every 30 s: found by the codes of this run
        self.add(secrets)

    @property
    def values(self) -> list[str]:
        """Every secret value, and the TOTP codes this run may have typed (what the screenshots mask)."""
        return [*self._values, *(code for totp in self._totps for code in totp.codes())]

    @property
    def given(self) -> list[str]:
        """Every value as gathered, without TOTP codes, also those too short to redact: what GitHub Actions masks in
        its log (it finds the forms it is told of, and a mask there shreds nothing but the log)."""
        return list(dict.fromkeys(v for v in self._given if v))

    @classmethod
    def of_tests(
        cls,
        secrets: Mapping[str, Mapping[str, str]],
        api_key: str | None = None,
        headers: Mapping[str, str] | None = None,
        basic_auth_password: str | None = None,
        github_token: str | None = None,
    ) -> Redactor:
        """Every test's secrets at once (test name -> placeholder -> value), and the run's API key, header values,
        basic-auth password and GitHub token."""
        found = {name: value for values in secrets.values() for name, value in values.items()}
        found |= {f"{HEADER}{name}": value for name, value in (headers or {}).items()}
        run_own = {BASIC_AUTH: basic_auth_password, GITHUB_TOKEN: github_token, API_KEY: api_key}
        found |= {name: value for name, value in run_own.items() if value}
        return cls(found)

    def add(self, secrets: Mapping[str, str]) -> None:
        """Secrets learnt during the run (a saved login's cookie values): redacted from now on, like the others."""
        self._given += secrets.values()
        found = [(v, k) for k, v in secrets.items() if secret_length(v) >= MIN_SECRET_LENGTH]
        pairs = sorted(
            [*zip(self._values, self._secrets, strict=True), *((v, _Secret(k, v)) for v, k in found)], key=lambda p: -len(p[0])
        )
        self._values, self._secrets = [v for v, _ in pairs], [s for _, s in pairs]
        self._totps += [TotpCodes(k, v) for k, v in secrets.items() if is_totp(k)]

    def text(self, text: str) -> str:
        if len(text) < CUT_MIN:  # keys, numbers, flags: nothing a secret's form fits in
            return text
        for secret in self._secrets:
            text = secret.redact(text)
        for totp in self._totps:
            text = totp.redact(text)
        return text

    def find(self, text: str) -> str | None:
        """The name of the first secret `text` holds whole, in any form (for a reason: see `describe`), else None."""
        found = next((s.name for s in self._secrets if s.whole.search(text) or s.encoded.search(text)), None)
        return found or next((t.name for t in self._totps if t.pattern().search(text)), None)

    def value(self, value: Any) -> Any:
        if not self._secrets and not self._totps:
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.value(k): self.value(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return type(value)(self.value(v) for v in value)
        return value

    def model(self, model: Model) -> Model:
        """A copy of a pydantic model with every secret replaced in its texts. Its field names and the values of its
        fields typed as a Literal or an Enum (our own words, never a secret's) are kept, so that the copy stays valid: a
        secret "STATUS" matches the key `status` (matching ignores case), and `value` of a dump would break it."""
        if not self._secrets and not self._totps:
            return model
        fields = type(model).model_fields
        kept = {name for name, field in fields.items() if _is_control(field.annotation)}
        return model.model_copy(update={name: self._deep(getattr(model, name)) for name in fields if name not in kept})

    def _deep(self, value: Any) -> Any:
        if isinstance(value, BaseModel):
            return self.model(value)
        if isinstance(value, dict):
            return {self._deep(k): self._deep(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return type(value)(self._deep(v) for v in value)
        return self.text(value) if isinstance(value, str) and not isinstance(value, Enum) else value


def _is_control(annotation: Any) -> bool:
    """A Literal or an Enum, or an optional one: a field whose values are our own control words."""
    if get_origin(annotation) is Literal or (isinstance(annotation, type) and issubclass(annotation, Enum)):
        return True
    if get_origin(annotation) in (Union, types.UnionType):
        return all(arg is type(None) or _is_control(arg) for arg in get_args(annotation))
    return False
