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


def test_the_guide_shows_the_workflow_init_writes() -> None:
    starter = ROOT / "src" / "preview_qa" / "starter" / WORKFLOW.name
    github = (ROOT / "docs" / "github-actions.md").read_text(encoding="utf-8").split("<!-- section: github -->")[1]
    shown = re.search(r"```yaml\n(.*?)```", github, re.S)
    assert shown and yaml.safe_load(shown.group(1)) == yaml.safe_load(starter.read_text(encoding="utf-8"))


def test_init_s_workflow_is_one_a_team_can_keep_and_zizmor_finds_nothing_in_it(tmp_path: Path) -> None:
    """Forks tested on pull_request_target from the base branch behind an approval, same-repo pull requests on
    pull_request, each once; a run per pull request at a time, a time limit, a cost cap, no expression in a shell."""
    assert run_in_process(["init"], cwd=tmp_path).returncode == 0
    workflow = yaml.safe_load((tmp_path / WORKFLOW).read_text(encoding="utf-8"))
    job = workflow["jobs"]["qa"]
    assert set(workflow[True]) == {"pull_request", "pull_request_target"} and workflow["permissions"] == {}  # `on:`
    assert (
        job["if"]
        == "(github.event_name == 'pull_request') == (github.event.pull_request.head.repo.full_name == github.repository)"
    )
    assert job["environment"] == "${{ github.event_name == 'pull_request_target' && 'preview-qa-forks' || '' }}"
    assert "ref" not in job["steps"][0].get("with", {})  # the base branch on pull_request_target: no fork code
    for flags in ([], ["--persona", "pedantic"]):
        audited = subprocess.run(
            [tool("zizmor"), "--offline", "--no-progress", *flags, "."], cwd=tmp_path, capture_output=True, text=True, timeout=120
        )
        assert audited.returncode == 0 and "No findings to report" in audited.stdout, audited.stdout + audited.stderr


def test_every_workflow_in_the_docs_has_a_time_limit_a_cost_cap_one_run_at_a_time_and_no_expression_in_a_shell() -> None:
    """zizmor's template-injection: `${{ }}` in a `run:` is pasted into the shell before it runs; an `env:` is not."""
    pages = [ROOT / "src" / "preview_qa" / "starter" / WORKFLOW.name, *sorted((ROOT / "docs").rglob("*.md"))]
    blocks = [
        b
        for p in pages
        for b in (
            [p.read_text(encoding="utf-8")]
            if p.suffix == ".yml"
            else re.findall(r"```yaml\n(.*?)```", p.read_text(encoding="utf-8"), re.S)
        )
    ]
    workflows = [w for w in (yaml.safe_load(b) for b in blocks if "\njobs:" in b or b.startswith("jobs:")) if isinstance(w, dict)]
    assert len(workflows) >= 5
    for workflow in workflows:
        for name, job in workflow["jobs"].items():
            assert "timeout-minutes" in job, (name, workflow)
            assert "concurrency" in workflow or "concurrency" in job, (name, workflow)
            assert not [s["run"] for s in job["steps"] if "${{" in s.get("run", "")], (name, workflow)
        text = yaml.safe_dump(workflow)
        assert "max-cost-usd" in text, workflow  # the action's run-max-cost-usd, or the CLI's --run-max-cost-usd
