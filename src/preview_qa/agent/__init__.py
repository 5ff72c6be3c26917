"""The only package that imports browser-use: runs one test's agent (or its replay) in a fresh browser context and
reports an AgentRun. browser-use is imported the first time a test needs the agent: a run of replays never loads it."""

# First: the environment browser-use reads as it is imported, whichever module imports it first (see there).
from preview_qa.agent.adapter import env as env
