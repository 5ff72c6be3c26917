"""Hypothesis generators of what an agent might output, shared by the pure property tests and the real-stack one,
and RAN: the cases each property ran, which tests/unit/test_properties.py prints at its end (docs/dev/promises.md quotes them)."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

RAN: dict[str, int] = {}  # property -> generated cases it ran

# Any code point incl. C0/C1 controls, NUL and lone surrogates (what non-UTF-8 bytes become once decoded leniently).
any_text = st.text(st.characters(codec=None, exclude_categories=()), max_size=60)
non_utf8 = st.binary(max_size=40).map(lambda b: b.decode("utf-8", "surrogateescape"))
huge = st.integers(10_000, 300_000).map(lambda n: "x" * n)
weird_text = st.one_of(any_text, non_utf8, huge, st.sampled_from(["", " ", "pass", "PASS", "fail", "null", "{}"]))
json_scalar = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), weird_text)
json_value = st.recursive(
    json_scalar, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(weird_text, inner, max_size=3), max_leaves=8
)
status_value = st.one_of(st.sampled_from(["pass", "fail", "Pass", "passed", "success", ""]), json_value)


@st.composite
def report_objects(draw: st.DrawFn) -> Any:
    """Something shaped more or less like {status, reason, data}: fields missing, of the wrong type, or extra."""
    obj: dict[str, Any] = {}
    if draw(st.booleans()):
        obj["status"] = draw(status_value)
    if draw(st.booleans()):
        obj["reason"] = draw(st.one_of(weird_text, json_value))
    if draw(st.booleans()):
        obj["data"] = draw(json_value)
    obj.update(
        draw(st.dictionaries(st.sampled_from(["success", "verdict", "extra", "Status", "reason "]), json_value, max_size=2))
    )
    return draw(st.one_of(st.just(obj), json_value))
