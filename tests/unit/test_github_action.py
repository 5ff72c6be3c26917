"""The action's files: action.yml against SchemaStore's schema, the workflows through actionlint, the Dockerfile through
hadolint, and the action's shell step run against a fake `docker` that records what it was asked to do."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
import yaml

from preview_qa.agent.browsers.launch import BROWSER_ARGS
from tests.conftest import clean_env
from tests.fakes.docker import action_step
from tests.fakes.github import read_outputs
from tests.repo import ROOT, tool

INPUTS = {
    "manifest",
    "prove",
    "base-url",
    "provider",
    "model",
    "api-key",
    "llm-base-url",
    "concurrency",
    "out",
    "wait-timeout",
    "extra-headers",
    "http-credentials",
    "comment",
    "github-token",
    "upload-artifacts",
    "artifact-name",
    "fail-on",
    "image",
    "cache",
    "shard",
    "max-tokens",
    "max-cost-usd",
    "run-max-tokens",
    "run-max-cost-usd",
    "price-per-mtok",
    "plan",
    "plan-max-cost-usd",
    "explore",
    "tags",
    "skip-tags",
    "changed-only",
    "impacted",
    "retries",
    "baseline-url",
    "accept-visual",
    "trace",
    "vision",
    "llm-timeout",
    "max-output-tokens",
    "browser-start-timeout",
    "cdp-url",
}
OUTPUTS = {
    "passed",
    "failed",
    "errored",
    "skipped",
    "total",
    "flaky",
    "healed",
    "changed",
    "vacuous",
    "unverified",
    "regressions",
    "results-path",
    "junit-path",
    "exit-code",
    "artifact-url",
}


def run(args: list[str], cwd: Path = ROOT, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=120, env=env)


@pytest.fixture(scope="module")
def action() -> dict:
    return yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))


def test_action_yml_matches_schemastores_github_action_schema(tmp_path: Path, action: dict) -> None:
    checked = run([tool("check-jsonschema"), "--builtin-schema", "vendor.github-actions", "action.yml"])
    assert checked.returncode == 0, checked.stdout + checked.stderr
    broken = tmp_path / "action.yml"
    broken.write_text(yaml.safe_dump({**action, "runs": {"using": "composite"}}), encoding="utf-8")
    assert run([tool("check-jsonschema"), "--builtin-schema", "vendor.github-actions", str(broken)]).returncode == 1


def test_action_declares_the_inputs_and_outputs_and_passes_inputs_only_through_env(action: dict) -> None:
    assert set(action["inputs"]) == INPUTS and set(action["outputs"]) == OUTPUTS
    assert action["inputs"]["base-url"]["required"] is True
    assert (action["inputs"]["manifest"]["default"], action["inputs"]["comment"]["default"]) == ("qa.yml", "true")
    assert action["inputs"]["github-token"]["default"] == "${{ github.token }}"
    steps = action["runs"]["steps"]
    assert action["runs"]["using"] == "composite"
    by_id = {step.get("id"): step for step in steps}
    run_step, upload = by_id["run"], by_id["upload"]
    for name in INPUTS - {"upload-artifacts", "artifact-name", "image", "cache"}:
        assert run_step["env"][f"INPUT_{name.upper()}"] == f"${{{{ inputs.{name} }}}}"
    # the replay cache: restored before the run, saved after it even when tests failed, or switched off for the CLI
    assert by_id["cache"]["uses"].startswith("actions/cache/restore@") and by_id["cache"]["with"]["path"] == ".preview-qa-cache"
    saved = next(s for s in steps if s.get("uses", "").startswith("actions/cache/save@"))
    assert saved["if"].startswith("always()") and saved["with"]["key"] == by_id["cache"]["with"]["key"]
    assert run_step["env"]["PREVIEW_QA_NO_CACHE"] == "${{ inputs.cache != 'true' && '1' || '' }}"
    assert all("${{" not in step.get("run", "") for step in steps)  # no expression is ever pasted into shell text
    assert upload["uses"].startswith("actions/upload-artifact@") and upload["if"].startswith("always()")
    assert action["outputs"]["artifact-url"]["value"] == "${{ steps.upload.outputs.artifact-url }}"
    assert action["outputs"]["passed"]["value"] == "${{ steps.run.outputs.passed }}"
    assert action["outputs"]["exit-code"]["value"] == "${{ steps.run.outputs.exit-code }}"


def expand(template: str, inputs: dict[str, str], github: dict[str, str], strategy: dict[str, str] | None = None) -> str:
    """The runner's substitution of `${{ inputs.x }}`, `${{ github.x }}` and `${{ strategy.x }}` (a job outside a
    matrix is leg 0 of 1); any other expression fails the test."""

    def value(match: re.Match[str]) -> str:
        context, _, name = match.group(1).partition(".")
        known = {"inputs": inputs, "github": github, "strategy": strategy or {"job-index": "0", "job-total": "1"}}
        return known[context][name]

    expanded = re.sub(r"\$\{\{\s*([\w.-]+)\s*\}\}", value, template)
    assert "${{" not in expanded, expanded
    return expanded


def test_replay_cache_is_kept_per_manifest_shard_job_and_matrix_leg_so_legs_never_share_it(action: dict) -> None:
    steps = action["runs"]["steps"]
    restore = next(s for s in steps if s.get("uses", "").startswith("actions/cache/restore@"))["with"]
    save = next(s for s in steps if s.get("uses", "").startswith("actions/cache/save@"))["with"]
    run = {"run_id": "99", "run_attempt": "1"}
    legs = [
        ({"manifest": "qa.yml", "shard": "1/2"}, {"job": "qa"}, None),
        ({"manifest": "qa.yml", "shard": "2/2"}, {"job": "qa"}, None),
        ({"manifest": "qa/other.yml", "shard": ""}, {"job": "qa"}, None),
        ({"manifest": "qa.yml", "shard": ""}, {"job": "qa"}, None),
        ({"manifest": "qa.yml", "shard": ""}, {"job": "staging"}, None),  # another job, say another preview
        *(
            ({"manifest": "qa.yml", "shard": ""}, {"job": "browsers"}, {"job-index": str(i), "job-total": "12"})
            for i in (1, 10, 11)
        ),
    ]  # a matrix without shards: leg 1's prefix must not match legs 10 and 11
    saved = [expand(save["key"], leg, {**run, **job}, strategy) for leg, job, strategy in legs]
    assert len(set(saved)) == len(legs)
    for (leg, job, strategy), own in zip(legs, saved, strict=True):
        assert expand(restore["key"], leg, {**run, **job}, strategy) == own
        prefix = expand(restore["restore-keys"], leg, {**run, **job}, strategy)
        # an earlier run's cache is restored by prefix: only this leg's own may match
        assert [key.startswith(prefix) for key in saved] == [key == own for key in saved]


@pytest.mark.parametrize(
    ("name", "shard", "leg", "expected"),
    [
        ("", "", None, "preview-qa-results-qa"),
        ("", "2/4", None, "preview-qa-results-qa-shard-2-of-4"),
        ("mine", "2/4", None, "mine"),
        ("", "", ("0", "3"), "preview-qa-results-qa-leg-1-of-3"),
        ("", "", ("2", "3"), "preview-qa-results-qa-leg-3-of-3"),
        ("", "2/4", ("1", "4"), "preview-qa-results-qa-shard-2-of-4"),
        ("mine", "", ("1", "3"), "mine"),
    ],
)
def test_default_artifact_name_is_unique_per_shard_and_matrix_leg(
    action: dict, tmp_path: Path, name: str, shard: str, leg: tuple[str, str] | None, expected: str
) -> None:
    step = next(s for s in action["runs"]["steps"] if s.get("id") == "artifact")
    upload = next(s for s in action["runs"]["steps"] if s.get("id") == "upload")
    assert upload["with"]["name"] == "${{ steps.artifact.outputs.name }}" and upload["with"]["overwrite"] is True
    output = tmp_path / "output"
    strategy = {"job-index": leg[0], "job-total": leg[1]} if leg else None
    env = {
        key: expand(value, {"artifact-name": name, "shard": shard}, {"job": "qa"}, strategy) for key, value in step["env"].items()
    }
    done = run(["bash", "-c", step["run"]], env=clean_env(**env, GITHUB_OUTPUT=str(output)))
    assert done.returncode == 0, done.stderr
    assert read_outputs(output) == {"name": expected}


def test_workflows_pass_actionlint_which_checks_the_self_test_against_action_yml(tmp_path: Path) -> None:
    linted = run([tool("actionlint"), "-no-color"])
    assert linted.returncode == 0, linted.stdout + linted.stderr
    run(["git", "init", "-q", str(tmp_path)])  # actionlint finds its project by the git repository
    (tmp_path / ".github" / "workflows").mkdir(parents=True)
    shutil.copy(ROOT / "action.yml", tmp_path / "action.yml")
    (tmp_path / ".github" / "workflows" / "bad.yml").write_text(
        "on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: ./\n"
        "        with: {base-url: 'https://x', fail_on: never}\n",
        encoding="utf-8",
    )
    bad = run([tool("actionlint"), "-no-color"], cwd=tmp_path)
    assert bad.returncode == 1 and 'input "fail_on" is not defined' in bad.stdout


def test_self_test_uses_the_action_from_this_checkout_and_asserts_its_outputs() -> None:
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "self-test.yml").read_text(encoding="utf-8"))
    steps = workflow["jobs"]["action"]["steps"]
    qa = next(s for s in steps if s.get("uses") == "./")
    assert qa["with"]["manifest"] == "src/preview_qa/demo/qa.yml" and "preview_qa.demo.serve" in str(steps)
    check = steps[steps.index(qa) + 1]
    assert set(check["env"]) >= {"PASSED", "FAILED", "ERRORED", "TOTAL", "ARTIFACT_URL", "EXIT_CODE"}
    assert "9/1/0/0/10/1/0/0" in check["run"]  # exit code 0: fail-on never; no pass on the agent's word alone
    assert qa["with"]["prove"] == "true" and '.proof.verdict == "vacuous"' in check["run"]
    release = yaml.safe_load((ROOT / ".github" / "workflows" / "release.yml").read_text(encoding="utf-8"))
    assert release[True] == {"push": {"tags": ["v*"]}}  # YAML 1.1 reads the key `on` as True
    assert "ghcr.io/${GITHUB_REPOSITORY,,}" in str(release) and "pattern=v{{major}}" in str(release)


def test_dockerfile_lints_and_installs_through_the_script_ci_runs() -> None:
    linted = run([tool("hadolint"), "Dockerfile"])
    assert linted.returncode == 0, linted.stdout + linted.stderr
    dockerfile = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    assert dockerfile.startswith("#") and "\nFROM python:3.12-slim-bookworm\n" in dockerfile
    assert "RUN /opt/preview-qa/scripts/install.sh" in dockerfile
    assert "scripts/install.sh --venv .venv --extras test" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert 'ENTRYPOINT ["/usr/bin/tini", "--", "preview-qa"]' in dockerfile
    for env in ("PREVIEW_QA_CHROMIUM=/usr/bin/chromium", "PLAYWRIGHT_BROWSERS_PATH=", "HOME=/tmp", "IN_DOCKER=true"):
        assert env in dockerfile
    assert "COPY requirements /opt/preview-qa/requirements" in dockerfile  # the lock, before the source: its own layer
    ignored = (ROOT / ".dockerignore").read_text(encoding="utf-8").split()
    assert ".git" in ignored and "requirements" not in ignored and "README.md" not in ignored  # pip install . needs them


FAKE_TOOL = """#!/usr/bin/env python3
import json, os, sys
name = os.path.basename(sys.argv[0])
with open(os.environ["FAKE_LOG"], "a") as f:
    f.write(json.dumps([name, *sys.argv[1:]]) + "\\n")
if name == "dpkg-query":  # dpkg-query -W -f='${db:Status-Status}' PACKAGE
    known = sys.argv[-1] in os.environ["FAKE_INSTALLED"].split()
    print("installed" if known else "", end="")
    sys.exit(0 if known else 1)
"""


@pytest.mark.parametrize(
    ("installed", "extras", "lock"),
    [
        ("chromium ca-certificates", [], "runtime.txt"),  # Chromium alone is not enough: its libraries and fonts count too
        ("chromium libatomic1 fonts-liberation fonts-noto-color-emoji ca-certificates tini", ["--extras", "test"], "test.txt"),
    ],
)
def test_install_script_checks_each_debian_package_and_installs_python_packages_from_the_lock(
    tmp_path: Path, installed: str, extras: list[str], lock: str
) -> None:
    for name in ("dpkg-query", "apt-get", "chromium", "python"):
        (tmp_path / name).write_text(FAKE_TOOL, encoding="utf-8")
        (tmp_path / name).chmod(0o755)
    log = tmp_path / "log.jsonl"
    env = clean_env(
        PATH=f"{tmp_path}{os.pathsep}/usr/bin:/bin", PYTHON=str(tmp_path / "python"), FAKE_LOG=str(log), FAKE_INSTALLED=installed
    )
    done = run(["bash", str(ROOT / "scripts" / "install.sh"), *extras], env=env)
    assert done.returncode == 0, done.stderr
    calls = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    apt = [call[1:] for call in calls if call[0] == "apt-get"]
    missing = [p for p in ("libatomic1", "fonts-liberation", "fonts-noto-color-emoji", "tini") if p not in installed]
    assert apt == ([["update", "-qq"], ["install", "-y", "-qq", "--no-install-recommends", *missing]] if missing else [])
    pip = [call[3:] for call in calls if call[:4] == ["python", "-m", "pip", "install"]]
    assert pip[0][-3:] == ["--require-hashes", "-r", str(ROOT / "requirements" / lock)]
    assert pip[1][-3:] == ["--no-deps", "--no-build-isolation", str(ROOT)] and len(pip) == 2


@pytest.mark.parametrize(("pull_exit", "image"), [(0, "ghcr.io/acme/preview-qa:v1"), (1, "preview-qa:local")])
def test_action_step_runs_the_image_with_inputs_forwarded_by_name(
    tmp_path: Path, pull_exit: int, image: str, action: dict
) -> None:
    workspace, temp = tmp_path / "workspace", tmp_path / "temp"
    hostile = "https://x.example/$(touch pwned)`touch pwned`"
    done, calls = action_step(tmp_path, FAKE_PULL_EXIT=str(pull_exit), **{"INPUT_BASE-URL": hostile})
    assert done.returncode == 0, done.stderr
    assert calls[0]["argv"][:2] == ["pull", "--quiet"] and calls[0]["argv"][-1] == "ghcr.io/acme/preview-qa:v1"
    if pull_exit:
        assert calls[1]["argv"] == ["build", "--quiet", "--tag", "preview-qa:local", str(ROOT)]
    validate, final = calls[-2], calls[-1]
    assert validate["argv"][-3:] == [image, "validate", "--secret-env"] and final["argv"][-2:] == [image, "run"]
    args = final["argv"]
    assert args[:2] == ["run", "--rm"] and args[args.index("--user") + 1] == f"{os.getuid()}:{os.getgid()}"
    assert not any(a.startswith("--shm-size") for a in args) and "--disable-dev-shm-usage" in BROWSER_ARGS  # /dev/shm unused
    assert f"{workspace}:{workspace}" in args and f"{temp}:{temp}" in args and args[args.index("--workdir") + 1] == str(workspace)
    forwarded = {args[i + 1] for i, a in enumerate(args) if a == "--env"}
    assert {"INPUT_BASE-URL", "INPUT_API-KEY", "GITHUB_OUTPUT", "DEMO_PASSWORD", "OTHER_SECRET"} <= forwarded
    not_for_the_cli = {"upload-artifacts", "artifact-name", "image", "cache"}
    assert {f"INPUT_{name.upper()}" for name in set(action["inputs"]) - not_for_the_cli} <= forwarded
    assert not any("=" in name or "$" in name for name in forwarded)
    assert final["base_url"] == hostile and not any(p.name == "pwned" for p in tmp_path.rglob("*"))


@pytest.mark.parametrize("code", [1, 3, 130])
def test_the_step_exits_with_preview_qas_own_code(tmp_path: Path, code: int) -> None:
    done, calls = action_step(tmp_path, FAKE_RUN_EXIT=str(code))
    assert done.returncode == code and calls[-1]["argv"][-1] == "run"  # and the CLI writes it as exit-code (its tests)


def test_a_manifest_refused_before_the_run_ends_the_step_with_its_code_as_the_exit_code_output(tmp_path: Path) -> None:
    done, calls = action_step(tmp_path, FAKE_VALIDATE_EXIT="2")
    assert done.returncode == 2 and calls[-1]["argv"][-2:] == ["validate", "--secret-env"]  # the run never started
    assert read_outputs(tmp_path / "temp" / "output.txt") == {"exit-code": "2"}


def test_demo_serve_starts_both_servers_and_says_where(tmp_path: Path) -> None:
    ready = tmp_path / "ready.env"
    proc = subprocess.Popen(
        [sys.executable, "-m", "preview_qa.demo.serve", "--inbox-port", "0", "--ready-file", str(ready)],
        env=clean_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not ready.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        values = dict(line.split("=", 1) for line in ready.read_text().splitlines())
        assert httpx.get(values["site-url"] + "/login").status_code == 200
        assert values["llm-url"].endswith("/v1") and httpx.get(values["llm-url"] + "/models").status_code < 500
        assert httpx.get(values["inbox-url"] + "/api/email").json() == []  # the mail catcher's MailDev API
    finally:
        proc.terminate()
        assert proc.wait(timeout=30) == 0, proc.stderr.read() if proc.stderr else ""
