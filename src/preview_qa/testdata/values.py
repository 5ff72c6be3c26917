"""The values a test's `before:` requests saved, put in place of <var>name</var> in the test (its task, start, steps,
checks) and in its later requests; and a value read from a JSON answer by a simple path ($.a.b[0])."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from pydantic import BaseModel

from preview_qa.manifest.models import VAR_TAG, json_path_parts

M = TypeVar("M", bound=BaseModel)
MISSING = object()


def read_path(document: Any, path: str) -> Any:
    """The value at `path` ($.id, $.items[0].id) in a parsed JSON document; MISSING where it has none."""
    found = document
    for part in json_path_parts(path):
        there = part < len(found) if isinstance(part, int) and isinstance(found, list) else None
        if there is None:
            there = isinstance(part, str) and isinstance(found, dict) and part in found
        if not there:
            return MISSING
        found = found[part]
    return found


def as_text(value: Any) -> str:
    """A saved value as it stands in a text: a string as it is, anything else as its JSON."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def fill_text(text: str, values: Mapping[str, str]) -> str:
    """`text` with each <var>name</var> of `values` replaced by its value (others left as written)."""
    return VAR_TAG.sub(lambda m: values.get(m.group(1), m.group(0)), text)


def each_text(value: Any, change: Callable[[str], str]) -> Any:
    """`value` (a model, a list, a dict, JSON) with every string in it changed; a model is copied, never validated again."""
    if isinstance(value, str):
        return change(value)
    if isinstance(value, list):
        return [each_text(item, change) for item in value]
    if isinstance(value, dict):
        return {key: each_text(item, change) for key, item in value.items()}
    if isinstance(value, BaseModel):
        return value.model_copy(update={name: each_text(getattr(value, name), change) for name in type(value).model_fields})
    return value


def filled(model: M, values: Mapping[str, str]) -> M:
    """`model` (a test) with its <var>s filled in."""
    if not values:
        return model
    result: M = each_text(model, lambda text: fill_text(text, values))
    return result
