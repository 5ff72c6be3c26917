"""Pure: the checks a test's evidence is held to, each -> its outcome: accessibility, the page's state, the agent's data,
the app's own requests, two screenshots compared."""
