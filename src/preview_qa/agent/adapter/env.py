"""The environment browser-use reads when it is first imported, set before any module can import it (agent/__init__.py
imports this module first): browser-use itself is imported only once a test needs the agent (agent/adapter/connect.py)."""

from __future__ import annotations

import os

# No telemetry, no logging set-up of its own (our reporters own the output; browser-use sets its logging up as it is
# imported), and no version check (else every test's agent asks PyPI for a newer release). Telemetry and the version
# check are set, not defaulted: no request leaves the user's CI that a test did not ask for, whatever the environment
# says.
os.environ["ANONYMIZED_TELEMETRY"] = "false"
os.environ.setdefault("BROWSER_USE_SETUP_LOGGING", "false")
os.environ["BROWSER_USE_VERSION_CHECK"] = "false"
