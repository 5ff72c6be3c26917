"""Pure: the data the agent returned, checked against the test's expected values."""

from __future__ import annotations

import json
from typing import Any

from preview_qa.results import ExpectationOutcome, clip

_MISSING = object()
SHOWN = 160  # characters of a found value (or page text) an outcome shows


def check_data(expected: dict[str, Any], data: dict[str, Any]) -> list[ExpectationOutcome]:
    """Each expected key (dotted paths reach into objects) holds the expected value in the agent's data."""
    out = []
    for key, want in expected.items():
        got = _lookup(data, key)
        found = "no such key" if got is _MISSING else json.dumps(got, ensure_ascii=False)
        ok = got is not _MISSING and _same(want, got)
        out.append(
            ExpectationOutcome(
                check=f"data.{key}", expected=json.dumps(want, ensure_ascii=False), found=clip(found, SHOWN), ok=ok
            )
        )
    return out


def _lookup(data: Any, dotted: str) -> Any:
    if isinstance(data, dict) and dotted in data:
        return data[dotted]
    current = data
    for part in dotted.split("."):
        if isinstance(current, dict) and part in current:
            current = current[part]
        elif isinstance(current, list) and part.isdigit() and int(part) < len(current):
            current = current[int(part)]
        else:
            return _MISSING
    return current


def _same(want: Any, got: Any) -> bool:
    """Equal values; strings compare with surrounding whitespace ignored; 3 equals 3.0 but never True."""
    if isinstance(want, str) and isinstance(got, str):
        return want.strip() == got.strip()
    if isinstance(want, bool) or isinstance(got, bool):
        return type(want) is type(got) and want == got
    if isinstance(want, int | float) and isinstance(got, int | float):
        return float(want) == float(got)
    if isinstance(want, dict) and isinstance(got, dict):
        return want.keys() == got.keys() and all(_same(want[k], got[k]) for k in want)
    if isinstance(want, list) and isinstance(got, list):
        return len(want) == len(got) and all(_same(a, b) for a, b in zip(want, got, strict=True))
    return bool(want == got)
