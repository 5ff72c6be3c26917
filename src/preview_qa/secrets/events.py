"""Every event the runner passes on, with each secret value replaced by its placeholder in every text it carries (its
results, its details, a trace's files)."""

from __future__ import annotations

import dataclasses
from typing import Any

from preview_qa.events import Event, TraceRecorded
from preview_qa.results import RunResult, TestResult
from preview_qa.secrets.redact import Redactor
from preview_qa.secrets.trace_zip import redact_trace


def redacted(event: Event, redactor: Redactor) -> Event:
    """The same event with every secret value replaced by its placeholder, in every text it carries."""
    changes: dict[str, Any] = {}
    for f in dataclasses.fields(event):
        value = getattr(event, f.name)
        if isinstance(value, TestResult | RunResult):
            changes[f.name] = redactor.model(value)
        elif isinstance(value, str | dict | list):
            changes[f.name] = redactor.value(value)
    if isinstance(event, TraceRecorded) and event.zip is not None:
        changes["zip"] = redact_trace(event.zip, redactor)
    return dataclasses.replace(event, **changes)
