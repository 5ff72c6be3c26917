"""`preview-qa init`: a starter manifest and workflow that pass validate, the schema and actionlint, never overwritten
without --force; the workflow is the one the README and docs/github-actions.md show."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import yaml

from preview_qa.manifest.schema import MODELINE
from tests.conftest import run_in_process
from tests.repo import ROOT, SCHEMA_FILE, tool

WORKFLOW = Path(".github/workflows/preview-qa.yml")


def test_init_writes_a_manifest_and_a_workflow_that_pass_validate_the_schema_and_actionlint(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)  # actionlint finds its project by the repository
    done = run_in_process(["init"], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[:2] == ["wrote qa.yml", f"wrote {WORKFLOW}"]
    manifest = (tmp_path / "qa.yml").read_text(encoding="utf-8")
    assert manifest.startswith(MODELINE + "\n")
    assert "expect:" in manifest and "<secret>password</secret>" in manifest and "tags:" in manifest

    validated = run_in_process(["validate", "--offline"], cwd=tmp_path)
    assert (validated.returncode, validated.stdout) == (0, "qa.yml: 2 test(s), valid.\n")
    secret_env = run_in_process(["validate", "--secret-env"], cwd=tmp_path)
    assert secret_env.stdout.split() == ["QA_PASSWORD"]
    workflow = yaml.safe_load((tmp_path / WORKFLOW).read_text(encoding="utf-8"))
    assert workflow["jobs"]["qa"]["steps"][1]["env"] == {"QA_PASSWORD": "${{ secrets.QA_PASSWORD }}"}  # what it reads

    checked = subprocess.run(
        [tool("check-jsonschema"), "--schemafile", str(SCHEMA_FILE), "qa.yml"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    linted = subprocess.run([tool("actionlint"), "-no-color"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert linted.returncode == 0, linted.stdout + linted.stderr


def test_init_never_overwrites_without_force(tmp_path: Path) -> None:
    (tmp_path / "qa.yml").write_text("version: 1\n# mine\n", encoding="utf-8")
    refused = run_in_process(["init"], cwd=tmp_path)
    assert (refused.returncode, refused.stdout) == (2, "")
    assert refused.stderr == "preview-qa: error: qa.yml already exists; nothing was written (--force overwrites).\n"
    assert (tmp_path / "qa.yml").read_text(encoding="utf-8") == "version: 1\n# mine\n"
    assert not (tmp_path / WORKFLOW).exists()  # not even the file that was missing

    forced = run_in_process(["init", "--force"], cwd=tmp_path)
    assert forced.returncode == 0 and (tmp_path / "qa.yml").read_text(encoding="utf-8").startswith(MODELINE)
    assert (tmp_path / WORKFLOW).exists()


def test_the_readme_and_the_guide_show_the_workflow_init_writes() -> None:
    starter = ROOT / "src" / "preview_qa" / "starter" / WORKFLOW.name
    for page in (ROOT / "README.md", ROOT / "docs" / "github-actions.md"):
        github = page.read_text(encoding="utf-8").split("<!-- section: github -->")[1]
        shown = re.search(r"```yaml\n(.*?)```", github, re.S)
        assert shown and yaml.safe_load(shown.group(1)) == yaml.safe_load(starter.read_text(encoding="utf-8")), page
