"""Replace secret values, in every form a URL, JSON or HTML gives them, with their `<secret>name</secret>` placeholders."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote, quote_plus

MIN_SECRET_LENGTH = 6  # a shorter value cannot be told apart from ordinary text: redacting it would shred the output
API_KEY = "api-key"  # placeholder names of the run's own secrets; a manifest's names are identifiers, so never clash
HEADER = "header:"


def secret_length(value: str) -> int:
    """How long a value is as a secret: whitespace does not count (pages and our one-line texts fold it)."""
    return len("".join(value.split()))


def forms(value: str) -> list[str]:
    """The concrete encodings of `value` a page, URL or serialiser produces: raw, percent-encoded (quote and
    quote_plus, upper- and lower-case hex), JSON-escaped and HTML-escaped. `Redactor` matches more (any mix of
    these per character, double encodings); this list is what can be told to others (GitHub's masks, the browser)."""
    percent = [quote(value, safe="", errors="surrogatepass"), quote(value, errors="surrogatepass"),
               quote_plus(value, safe="/", errors="surrogatepass"), quote_plus(value, errors="surrogatepass")]
    lower = [re.sub(r"%[0-9A-F]{2}", lambda m: m.group(0).lower(), p) for p in percent]
    escaped = [json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1], html.escape(value),
               html.escape(value, quote=False)]
    return list(dict.fromkeys([value, *percent, *lower, *escaped]))


def _char_forms(char: str) -> list[str]:
    """Regular expressions for one character in each of its encodings (matched case-insensitively)."""
    point = ord(char)
    percent = "".join(f"%(?:25)*{byte:02X}" for byte in char.encode("utf-8", "surrogatepass"))
    units = [point] if point <= 0xFFFF else [0xD800 + ((point - 0x10000) >> 10), 0xDC00 + ((point - 0x10000) & 0x3FF)]
    found = [re.escape(char), percent, "".join(rf"\\+u{unit:04X}" for unit in units),  # JSON, JSON in JSON
             rf"&(?:amp;)*#0*{point};", rf"&(?:amp;)*#x0*{point:X};"]  # HTML numeric entities, once or twice escaped
    short = json.dumps(char)[1:-1]
    if short.startswith("\\") and not short.startswith("\\u"):  # \" \\ \n \t ...: escaped once or more
        found.append(r"\\+" + re.escape(short[1:]))
    if char == "/":
        found.append(r"\\+/")
    named = html.escape(char)
    if named != char:
        found.append("&(?:amp;)*" + re.escape(named[1:]))
    if char == "'":
        found.append("&(?:amp;)*apos;")
    return found


_SPACE = [r"\s", r"\+", r"%(?:25)*(?:20|09|0A|0D)", r"\\+[ntr]", r"\\+u00A0", "&(?:amp;)*(?:nbsp|#160|#xA0);",
          r"&(?:amp;)*#(?:32|9|10|13);", r"&(?:amp;)*#x(?:20|9|A|D);"]


def pattern(value: str) -> re.Pattern[str]:
    """Matches `value` with each character in any of its forms; a run of whitespace matches any run (pages and our
    one-line summaries fold it); letters in any case (hex digits and entities differ in case between encoders)."""
    parts = []
    for run in re.findall(r"\s+|\S", value):
        if run.isspace():  # its own characters' forms, or any whitespace in any form, once or more
            parts.append("(?:" + "|".join(dict.fromkeys(f for c in run for f in [*_char_forms(c), *_SPACE])) + ")+")
        else:
            parts.append("(?:" + "|".join(_char_forms(run)) + ")")
    return re.compile("".join(parts), re.IGNORECASE)


class Redactor:
    """Knows every secret of a run; longest values first so a secret that contains another is replaced whole."""

    def __init__(self, secrets: Mapping[str, str]):
        values = sorted(((v, k) for k, v in secrets.items() if secret_length(v) >= MIN_SECRET_LENGTH),
                        key=lambda p: -len(p[0]))
        self.values = [v for v, _ in values]
        self._patterns = [(pattern(v), f"<secret>{k}</secret>") for v, k in values]

    @classmethod
    def of_tests(cls, secrets: Mapping[str, Mapping[str, str]], api_key: str | None = None,
                 headers: Mapping[str, str] | None = None) -> Redactor:
        """Every test's secrets at once (test name -> placeholder -> value), and the run's API key and header values."""
        found = {name: value for values in secrets.values() for name, value in values.items()}
        found |= {f"{HEADER}{name}": value for name, value in (headers or {}).items()}
        if api_key:
            found[API_KEY] = api_key
        return cls(found)

    def text(self, text: str) -> str:
        for found, placeholder in self._patterns:
            text = found.sub(lambda _, p=placeholder: p, text)
        return text

    def value(self, value: Any) -> Any:
        if not self._patterns:
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.value(k): self.value(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return type(value)(self.value(v) for v in value)
        return value
