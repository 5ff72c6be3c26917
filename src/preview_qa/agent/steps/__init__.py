"""A test written as steps (issue #47) on one browser context: its session (a task's, driving each step in turn), the
exact actions, and how each step's outcome is kept."""
