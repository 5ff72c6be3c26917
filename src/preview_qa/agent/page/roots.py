"""Every open shadow root watched with its document, for the watchers of our own worlds (agent/page/roots.js)."""

from __future__ import annotations

import functools
from importlib import resources


@functools.cache
def roots() -> str:
    """The factory, a JavaScript expression: `(roots())(onChange, options)` observes the document and its open shadow
    roots with `options` and returns `sweep`, which watches the roots attached since and says whether it found one."""
    return resources.files(__package__).joinpath("roots.js").read_text(encoding="utf-8")
