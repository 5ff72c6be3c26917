"""What a test leaves behind besides its verdict: error evidence, dialogs answered, the trace, where its time went, and
the names of the agent's actions."""
