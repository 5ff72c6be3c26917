"""Page and LLM text as a coding agent reads it: fenced and labelled as the preview's untrusted text, in one format
(docs/coding-agents.md#untrusted-text), with every copy of the fence's marker inside it escaped, so that no page can
close the fence and speak as preview-qa. A model's fields marked `Untrusted` are fenced by `fenced`."""

from __future__ import annotations

import re
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, Field

OPEN = "<untrusted-preview-text>"
CLOSE = "</untrusted-preview-text>"
# A copy of either marker inside the text, as a reader might take it for one: any case, any dashes, underscores or
# spaces between its words, and the look-alikes of `<` (fullwidth, small, angle brackets). Its `<` is escaped.
_MARKER = re.compile(r"[<\uff1c\ufe64\u2039\u2329\u27e8\u3008]\s*/?\s*untrusted[\W_]*preview[\W_]*text", re.IGNORECASE)
ESCAPED_OPENER = "&lt;"
DESCRIBED = "Untrusted: the preview's or the test's LLM's text, fenced."


class _Marker:
    """The metadata that marks a model's field as untrusted text (a str, an optional str, or a list of str)."""

    def __repr__(self) -> str:
        return "UNTRUSTED"


UNTRUSTED = _Marker()
Untrusted = Annotated[str, UNTRUSTED, Field(description=DESCRIBED)]
UntrustedOrNone = Annotated[str | None, UNTRUSTED, Field(description=DESCRIBED)]
UntrustedList = Annotated[list[str], UNTRUSTED, Field(description=DESCRIBED)]

Model = TypeVar("Model", bound=BaseModel)


def escape(text: str) -> str:
    """`text` with every copy of the fence's marker made inert (its `<` written `&lt;`); nothing else changes."""
    return _MARKER.sub(lambda m: ESCAPED_OPENER + m.group()[1:], text)


def fence(text: str) -> str:
    """The text between the markers: on one line when it is one line, else from the line after the opening marker to
    the line before the closing one. An empty text stays empty: there is nothing to fence."""
    if not text:
        return text
    inner = escape(text)
    return f"{OPEN}\n{inner}\n{CLOSE}" if "\n" in inner else f"{OPEN}{inner}{CLOSE}"


def fenced(model: Model) -> Model:
    """A copy of `model` with each field marked `Untrusted` fenced, in nested models and lists of models too."""
    changes: dict[str, Any] = {}
    for name, field in type(model).model_fields.items():
        value = getattr(model, name)
        if UNTRUSTED in field.metadata:
            changes[name] = [fence(v) for v in value] if isinstance(value, list) else value and fence(value)
        elif isinstance(value, BaseModel):
            changes[name] = fenced(value)
        elif isinstance(value, list) and value and isinstance(value[0], BaseModel):
            changes[name] = [fenced(v) for v in value]
    return model.model_copy(update=changes)
