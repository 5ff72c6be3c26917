"""A `docker` stand-in for scripts/action.sh: it records each call (FAKE_DOCKER_LOG), answers `pull` with
FAKE_PULL_EXIT, prints hostile variable names for `validate --secret-env`, and exits with FAKE_VALIDATE_EXIT or
FAKE_RUN_EXIT (default 0)."""

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
