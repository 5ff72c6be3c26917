"""Shortening text for one-line messages: the same rules in every reason, event and report."""

from __future__ import annotations


def clip(text: str, limit: int) -> str:
    """At most `limit` characters; a cut one ends with an ellipsis."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def one_line(text: str, limit: int) -> str:
    """Whitespace (line breaks included) folded to single spaces, then clipped."""
    return clip(" ".join(text.split()), limit)


def error_line(error: object, limit: int = 300) -> str:
    """An exception's text on one line, cut (without an ellipsis) at `limit`."""
    return " ".join(str(error).split())[:limit]
