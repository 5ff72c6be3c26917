"""The default --concurrency follows the machine: two tests a core, within the memory free now (issue #70)."""

from __future__ import annotations

import pytest

from preview_qa import config


@pytest.mark.parametrize(
    ("cores", "free_mb", "tests"),
    [
        (2, 24_000.0, 4),  # this machine: the cores bound it
        (4, 15_000.0, 8),  # a GitHub-hosted Linux runner
        (8, 1_000.0, 4),  # a container with 1 GB left: memory bounds it
        (1, 100.0, 1),  # never none
        (2, None, 4),  # memory unknown: the cores alone
    ],
)
def test_two_tests_a_core_within_the_free_memory(
    monkeypatch: pytest.MonkeyPatch, cores: int, free_mb: float | None, tests: int
) -> None:
    monkeypatch.setattr(config.os, "sched_getaffinity", lambda _pid: set(range(cores)))
    monkeypatch.setattr(config, "_available_mb", lambda: free_mb)
    assert config.default_concurrency() == tests
