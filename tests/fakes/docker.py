"""A stand-in `docker` for the action's run step: logs each call, answers `pull` with FAKE_PULL_EXIT."""

FAKE_DOCKER = """#!/usr/bin/env python3
import json, os, sys
with open(os.environ["FAKE_DOCKER_LOG"], "a") as f:
    f.write(json.dumps({"argv": sys.argv[1:], "base_url": os.environ.get("INPUT_BASE-URL")}) + "\\n")
if sys.argv[1] == "pull":
    sys.exit(int(os.environ["FAKE_PULL_EXIT"]))
if sys.argv[-2:] == ["validate", "--secret-env"]:
    print("DEMO_PASSWORD\\nbad=name\\n$(touch pwned)\\nOTHER_SECRET")
"""
