"""The action's supply chain: every remote action pinned by commit SHA with its version beside it (action.yml, the
workflows, the workflow `init` writes, the docs' examples), zizmor clean on the repository and on the examples, the
release image tagged by commit SHA with its attestations, and action.sh pulling by whichever ref a workflow gave."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.fakes.docker import action_step
from tests.repo import ROOT, tool

# Our own action, as the examples name it: no file in this repository can hold the commit SHA of the release that
# contains it, so the examples use its version tag and docs/github-actions.md shows how to pin it by commit.
OURS = "OWNER/preview-qa"
USES = re.compile(r"^\s*(?:-\s+)?uses:\s*(?P<ref>[^\s#]+)[ \t]*(?P<comment>#.*)?$", re.M)
PINNED = re.compile(r"^(?P<action>[\w.-]+/[\w.-]+)(?:/[\w./-]+)?@(?P<sha>[0-9a-f]{40})$")
VERSION = re.compile(r"^# v\d+\.\d+\.\d+$")
FENCED_YAML = re.compile(r"```yaml\n(.*?)```", re.S)


def sources() -> list[Path]:
    """Every file a `uses:` of ours lives in: the action, the workflows, the starter and the Markdown docs."""
    workflows = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
    docs = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").rglob("*.md"))]
    return [ROOT / "action.yml", *workflows, ROOT / "src" / "preview_qa" / "starter" / "preview-qa.yml", *docs]


def remote_uses() -> list[tuple[str, str, str]]:
    """(file, ref, comment) for each `uses:` of another repository's action."""
    found = []
    for path in sources():
        for match in USES.finditer(path.read_text(encoding="utf-8")):
            ref = match["ref"].strip("'\"")
            if not ref.startswith(("./", "docker://")) and not ref.startswith(f"{OURS}@"):
                found.append((str(path.relative_to(ROOT)), ref, (match["comment"] or "").strip()))
    return found


def test_every_remote_action_is_pinned_by_commit_sha_with_its_version_beside_it() -> None:
    uses = remote_uses()
    files = {file for file, _, _ in uses}
    assert {"action.yml", ".github/workflows/release.yml", "src/preview_qa/starter/preview-qa.yml"} <= files
    assert any(file.startswith("docs/") for file in files)
    unpinned = [(file, ref, comment) for file, ref, comment in uses if not PINNED.match(ref) or not VERSION.match(comment)]
    assert unpinned == []


def test_each_action_has_one_pin_everywhere_so_the_docs_follow_dependabots_updates() -> None:
    pins: dict[str, set[tuple[str, str]]] = {}
    for _, ref, comment in remote_uses():
        match = PINNED.match(ref)
        assert match, ref
        pins.setdefault(match["action"], set()).add((match["sha"], comment))
    assert {action: pin for action, pin in pins.items() if len(pin) > 1} == {}
    assert {"actions/checkout", "actions/cache", "actions/upload-artifact", "actions/attest-build-provenance"} <= set(pins)


def zizmor(folder: Path, *args: str) -> list[dict]:
    done = subprocess.run(
        [tool("zizmor"), "--offline", "--min-severity", "medium", "--format", "json", *args, "."],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.stdout.strip(), done.stderr
    findings: list[dict] = json.loads(done.stdout)
    assert (done.returncode == 0) == (findings == []), done.stderr  # its exit code fails CI on any finding
    return findings


def summary(findings: list[dict]) -> list[tuple[str, str]]:
    """(audit, the flagged text) of each finding."""
    out = []
    for finding in findings:
        primary = next(loc for loc in finding["locations"] if loc["symbolic"]["kind"] == "Primary")
        out.append((finding["ident"], primary["concrete"]["feature"].strip()))
    return sorted(out)


def test_zizmor_finds_nothing_in_the_repository_and_would_catch_an_unpinned_action(tmp_path: Path) -> None:
    assert zizmor(ROOT) == []
    (tmp_path / ".github" / "workflows").mkdir(parents=True)
    shutil.copy(ROOT / ".github" / "dependabot.yml", tmp_path / ".github" / "dependabot.yml")
    (tmp_path / ".github" / "workflows" / "bad.yml").write_text(
        "on: push\npermissions: {}\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v5\n",
        encoding="utf-8",
    )
    assert summary(zizmor(tmp_path)) == [("artipacked", "uses: actions/checkout@v5"), ("unpinned-uses", "actions/checkout@v5")]


def test_the_docs_workflows_and_inits_pass_zizmor_but_for_our_own_actions_ref(tmp_path: Path) -> None:
    workflows = tmp_path / ".github" / "workflows"
    workflows.mkdir(parents=True)
    shutil.copy(ROOT / "src" / "preview_qa" / "starter" / "preview-qa.yml", workflows / "init.yml")
    for page in (ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))):
        for i, block in enumerate(FENCED_YAML.findall(page.read_text(encoding="utf-8"))):
            if re.search(r"^jobs:", block, re.M):  # a whole workflow, not a fragment of one
                (workflows / f"{page.stem}-{i}.yml").write_text(block, encoding="utf-8")
    assert len(list(workflows.iterdir())) >= 5
    found = summary(zizmor(tmp_path))
    assert ("unpinned-uses", f"{OURS}@v1") in found  # the docs' (init's says why it is ignored: tests/unit/test_init.py)
    assert [(audit, ref) for audit, ref in found if audit != "unpinned-uses" or not ref.startswith(f"{OURS}@")] == []


@pytest.fixture(scope="module")
def release() -> dict:
    return yaml.safe_load((ROOT / ".github" / "workflows" / "release.yml").read_text(encoding="utf-8"))


def test_release_tags_the_image_by_commit_sha_and_attests_its_provenance_and_sbom(release: dict) -> None:
    assert release["permissions"] == {}
    (job,) = release["jobs"].values()
    assert job["permissions"] == {"contents": "read", "packages": "write", "id-token": "write", "attestations": "write"}
    steps = {step.get("id") or step.get("name"): step for step in job["steps"]}
    tags = steps["meta"]["with"]["tags"].split()
    assert "type=sha,format=long,prefix=" in tags and "type=semver,pattern=v{{major}}" in tags  # :<40-hex SHA>, :v1
    assert steps["push"]["with"]["push"] is True and steps["push"]["with"]["sbom"] is True
    attests = [step["with"] for step in job["steps"] if step.get("uses", "").startswith("actions/attest-build-provenance@")]
    digest = "${{ steps.push.outputs.digest }}"
    assert [a["subject-digest"] for a in attests] == [digest, digest] and all(a["push-to-registry"] for a in attests)
    assert [a.get("predicate-type") for a in attests] == [None, "https://spdx.dev/Document/v2.3"]
    checkouts = [s for s in job["steps"] if s.get("uses", "").startswith("actions/checkout@")]
    assert [s["with"]["persist-credentials"] for s in checkouts] == [False]


SHA = "0123456789abcdef0123456789abcdef01234567"


@pytest.mark.parametrize(
    ("ref", "pulled"),
    [
        (SHA, f"ghcr.io/acme/preview-qa:{SHA}"),  # a workflow that pins the action by commit
        ("v1.2.3", "ghcr.io/acme/preview-qa:v1.2.3"),
        ("feature/x", None),  # a branch with a slash cannot be an image tag: built from source, no pull
    ],
)
def test_action_step_pulls_the_image_of_the_ref_the_workflow_gave(tmp_path: Path, ref: str, pulled: str | None) -> None:
    done, steps = action_step(tmp_path, ACTION_REF=ref)
    assert done.returncode == 0, done.stderr
    calls = [step["argv"] for step in steps]
    assert [call[-1] for call in calls if call[0] == "pull"] == ([pulled] if pulled else [])
    image = pulled or "preview-qa:local"
    assert calls[-1][-2:] == [image, "run"] and (pulled is None) == any(call[0] == "build" for call in calls)
