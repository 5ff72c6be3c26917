"""Replays a recording without the agent, through Playwright alone: the recording read as steps, the player, its
table of actions, and the recorded element found on the live page."""
