"""The results folder: where each file lives, how it is written, and what reporters read back from it (steps, images)."""
