"""A `docker` stand-in for scripts/action.sh: it records each call (FAKE_DOCKER_LOG), answers `pull` with
FAKE_PULL_EXIT, prints hostile variable names for `validate --secret-env`, and exits with FAKE_VALIDATE_EXIT or
FAKE_RUN_EXIT (default 0); and the action's step run against it."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from tests.conftest import clean_env
from tests.repo import ROOT

FAKE_DOCKER = """#!/usr/bin/env python3
import json, os, sys
with open(os.environ["FAKE_DOCKER_LOG"], "a") as f:
    f.write(json.dumps({"argv": sys.argv[1:], "base_url": os.environ.get("INPUT_BASE-URL")}) + "\\n")
if sys.argv[1] == "pull":
    sys.exit(int(os.environ["FAKE_PULL_EXIT"]))
if sys.argv[-2:] == ["validate", "--secret-env"]:
    print("DEMO_PASSWORD\\nbad=name\\n$(touch pwned)\\nOTHER_SECRET")
    sys.exit(int(os.environ.get("FAKE_VALIDATE_EXIT", "0")))
sys.exit(int(os.environ.get("FAKE_RUN_EXIT", "0")))
"""


def action_step(tmp_path: Path, **env: str) -> tuple[subprocess.CompletedProcess[str], list[dict[str, Any]]]:
    """scripts/action.sh as the runner runs it, against the fake `docker`: how it ended, and each docker call."""
    bin_dir, workspace, temp = tmp_path / "bin", tmp_path / "workspace", tmp_path / "temp"
    for folder in (bin_dir, workspace, temp):
        folder.mkdir()
    (bin_dir / "docker").write_text(FAKE_DOCKER, encoding="utf-8")
    (bin_dir / "docker").chmod(0o755)
    step_env = clean_env(
        PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        FAKE_DOCKER_LOG=str(tmp_path / "log.jsonl"),
        GITHUB_ACTION_PATH=str(ROOT),
        GITHUB_WORKSPACE=str(workspace),
        GITHUB_OUTPUT=str(temp / "output.txt"),
        RUNNER_TEMP=str(temp),
        ACTION_REPOSITORY="Acme/Preview-QA",
        **{"ACTION_REF": "v1", "FAKE_PULL_EXIT": "0", "PREVIEW_QA_IMAGE": "", **env},
    )
    done = subprocess.run(
        ["bash", str(ROOT / "scripts" / "action.sh")], cwd=workspace, env=step_env, capture_output=True, text=True, timeout=120
    )
    return done, [json.loads(line) for line in (tmp_path / "log.jsonl").read_text(encoding="utf-8").splitlines()]
