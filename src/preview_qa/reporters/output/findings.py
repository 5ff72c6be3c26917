"""What `explore` found, as every report groups it: the breaks (one fault on many pages is one entry), what main has
too, the unconfirmed; and a repro as the YAML a reader pastes under `tests:`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml

from preview_qa.results import ExploreResult, Finding

DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)  # libyaml's, when PyYAML has it: a list of thousands in a blink


@dataclass(frozen=True)
class Grouped:
    breaks: list[list[Finding]]  # each: one fault, on its first page and the others alike (the same kind and summary)
    on_main: list[Finding]
    unconfirmed: list[Finding]

    @classmethod
    def of(cls, result: ExploreResult) -> Grouped:
        alike: dict[tuple[str, str], list[Finding]] = {}
        for f in result.breaks:
            alike.setdefault((f.kind.value, f.summary), []).append(f)
        return cls(
            list(alike.values()),
            [f for f in result.findings if f.on_baseline],
            [f for f in result.findings if not f.on_baseline and not f.confirmed],
        )


def repro_yaml(test: dict[str, Any]) -> str:
    """The repro as a one-test YAML list, to paste under a manifest's `tests:`."""
    return yaml.dump([test], Dumper=DUMPER, sort_keys=False, allow_unicode=True)
