"""The only package that imports browser-use: runs one test's agent in a fresh browser and reports an AgentRun."""

# First: it sets the environment browser-use reads as it is imported (see there).
from preview_qa.agent import browser_use_patches as browser_use_patches
