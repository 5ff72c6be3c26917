"""Pure: (test spec, the agent's run, page facts) -> Verdict, and the checks on the agent's data. No browser library."""
