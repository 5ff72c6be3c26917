"""The only package that imports browser-use: runs one test's agent in a fresh browser and reports an AgentRun."""

import os

# Before browser-use is imported: no telemetry, and no logging set-up of its own (our reporters own the output).
# Set, not defaulted: no request leaves the user's CI that a test did not ask for, whatever the environment says.
os.environ["ANONYMIZED_TELEMETRY"] = "false"
os.environ.setdefault("BROWSER_USE_SETUP_LOGGING", "false")
os.environ["BROWSER_USE_VERSION_CHECK"] = "false"  # else every test's agent asks PyPI for a newer release
