"""expect.visual's reference in the replay cache: written only by a run on the default branch (GitHub's environment, read
in config.py), read back for the same test, and not used once the mask or the page size asked for changed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from preview_qa.config import RunConfig, on_default_branch
from preview_qa.engine.replay_cache import CacheReporter, RecordingCache
from preview_qa.events import VisualReference
from preview_qa.manifest.models import Manifest


def _env(tmp_path: Path, event: str, ref: str, default: str | None = "main") -> dict[str, str]:
    payload = tmp_path / "event.json"
    payload.write_text(json.dumps({"repository": {"default_branch": default}} if default else {}), encoding="utf-8")
    return {"GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": event, "GITHUB_REF_NAME": ref, "GITHUB_EVENT_PATH": str(payload)}


@pytest.mark.parametrize(
    ("event", "ref", "default", "keeps"),
    [
        ("push", "main", "main", True),
        ("schedule", "main", "main", True),
        ("push", "feature", "main", False),  # another branch
        ("pull_request", "main", "main", False),  # a pull request never writes the reference
        ("pull_request_target", "main", "main", False),
        ("push", "main", None, False),  # not knowing the default branch keeps the reference that is there
    ],
)
def test_only_a_run_on_the_default_branch_keeps_the_reference(
    tmp_path: Path, event: str, ref: str, default: str | None, keeps: bool
) -> None:
    assert on_default_branch(_env(tmp_path, event, ref, default)) is keeps


def test_not_in_github_actions_no_reference_is_kept() -> None:
    assert on_default_branch({}) is False


def _manifest(visual: dict[str, object]) -> Manifest:
    return Manifest.model_validate({"version": 1, "tests": [{"name": "t", "task": "x", "expect": {"visual": visual}}]})


def test_a_kept_reference_is_read_back_and_dropped_when_the_mask_changes(tmp_path: Path) -> None:
    manifest = _manifest({"mask": ["#clock"]})
    cache = RecordingCache(tmp_path, manifest, "openai", "scripted")
    CacheReporter(cache, manifest, RunConfig(Path("qa.yml"), "http://preview")).handle(
        VisualReference(name="t", shots=(("final", b"png"), ("2", b"p2")))
    )
    assert cache.reference(manifest.tests[0]) == {"final": b"png", "2": b"p2"}
    assert cache.lookup(manifest.tests[0]) is None  # a reference is no recording: the test is not replayed from it
    for changed in ({"mask": ["#other"]}, {"mask": ["#clock"], "full_page": True}):
        other = _manifest(changed)
        assert RecordingCache(tmp_path, other, "openai", "scripted").reference(other.tests[0]) is None
