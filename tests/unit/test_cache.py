"""The replay cache store: what changes a test's key, what is written back, and that a damaged entry only costs a run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from preview_qa.config import RunConfig
from preview_qa.engine import replay_cache as cache_mod
from preview_qa.engine.replay_cache import CacheReporter, RecordingCache
from preview_qa.events import AgentHistory, StepRecorded, TestFinished
from preview_qa.manifest.models import Manifest, TestSpec
from preview_qa.results import Status, TestResult
from tests.builders import spec

LOGIN: dict[str, Any] = {"name": "login", "task": "log in", "start": "/login", "expect": {"url": "/dashboard"}}
HISTORY = {"history": [{"model_output": {"action": [{"navigate": {"url": "http://old:1/login"}}]}}]}


def manifest(*tests: TestSpec) -> Manifest:
    return Manifest(version=1, tests=list(tests))


def store(tmp_path: Path, **kw: Any) -> RecordingCache:
    return RecordingCache(tmp_path, manifest(spec(**LOGIN)), kw.get("provider", "openai"), kw.get("model", "gpt-x"))


@pytest.mark.parametrize(
    "change",
    [
        {"task": "log in twice"},
        {"start": "/signin"},
        {"expect": {"url": "/home"}},
        {"expect": {"text": ["Hi"]}},
        {"output_schema": {"type": "object"}},
        {"allowed_domains": ["cdn.example"]},
        {"secrets": {"pw": "PW"}},
    ],
)
def test_anything_that_defines_the_test_changes_its_key(tmp_path: Path, change: dict[str, Any]) -> None:
    assert store(tmp_path).key(spec(**LOGIN | change)) != store(tmp_path).key(spec(**LOGIN))


def test_the_model_provider_and_browser_use_version_change_the_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base = store(tmp_path).key(spec(**LOGIN))
    assert store(tmp_path, model="gpt-y").key(spec(**LOGIN)) != base
    assert store(tmp_path, provider="anthropic").key(spec(**LOGIN)) != base
    monkeypatch.setattr(cache_mod, "version", lambda name: "99.0")
    assert store(tmp_path).key(spec(**LOGIN)) != base


def test_name_budgets_and_timeouts_do_not_change_the_key(tmp_path: Path) -> None:
    same = spec(
        **LOGIN | {"name": "renamed", "timeout": 10, "max_steps": 3, "max_tokens": 5, "max_cost_usd": 0.1, "skip": "later"}
    )
    assert store(tmp_path).key(same) == store(tmp_path).key(spec(**LOGIN))


def test_a_stored_recording_loads_back_with_each_steps_page(tmp_path: Path) -> None:
    cache = store(tmp_path)
    cache.store(spec(**LOGIN), "http://old:1", HISTORY, screenshots={1: b"\x89PNG one", 2: b"\x89PNG two"})
    recording = cache.load(spec(**LOGIN))
    assert recording is not None and recording.origin == "http://old:1" and recording.history == HISTORY
    assert recording.screenshots == {1: b"\x89PNG one", 2: b"\x89PNG two"}
    assert cache.load(spec(**LOGIN | {"task": "another task"})) is None


@pytest.mark.parametrize("content", ["{not json", "[]", '{"format": 1}', '{"format": 1, "origin": "x", "history": {}}'])
def test_a_damaged_entry_is_a_miss_not_an_error(tmp_path: Path, content: str) -> None:
    cache = store(tmp_path)
    cache.path(spec(**LOGIN)).write_text(content, encoding="utf-8")
    assert cache.load(spec(**LOGIN)) is None


def finished(status: Status, path: str) -> TestFinished:
    return TestFinished(result=TestResult(name="login", file="qa.yml", line=3, status=status, reason="r", path=path))


@pytest.mark.parametrize(
    ("status", "path", "written"),
    [
        (Status.PASSED, "agent", True),
        (Status.PASSED, "replay-fell-back", True),
        (Status.PASSED, "replayed", False),
        (Status.FAILED, "agent", False),
        (Status.ERRORED, "agent", False),
    ],
)
def test_only_a_pass_after_an_agent_run_is_written_back(tmp_path: Path, status: Status, path: str, written: bool) -> None:
    cache = store(tmp_path)
    reporter = CacheReporter(
        cache, manifest(spec(**LOGIN)), RunConfig(manifest=Path("qa.yml"), base_url="https://pr-42.preview.example/some/path")
    )
    reporter.handle(
        StepRecorded(
            name="login", number=1, goal="g", actions=[], url="", error=None, screenshot_png=b"after", before_png=b"seen"
        )
    )
    visited = ["https://pr-42.preview.example/login", "https://pr-42.preview.example/home"]
    reporter.handle(AgentHistory(name="login", history=HISTORY, visited=visited))
    reporter.handle(finished(status, path))
    assert cache.path(spec(**LOGIN)).exists() is written
    if written:
        entry = json.loads(cache.path(spec(**LOGIN)).read_text(encoding="utf-8"))
        assert entry["origin"] == "https://pr-42.preview.example" and entry["test"] == "login"
        assert cache.load(spec(**LOGIN)).screenshots == {1: b"seen"}  # type: ignore[union-attr]
        assert cache.load(spec(**LOGIN)).pages() == ["/login", "/home"]  # type: ignore[union-attr]  (run --impacted)
