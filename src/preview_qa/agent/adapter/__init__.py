"""The browser-use adapter: its LLM providers, the Agent built for one test and its run read back, its session on a
lease, and the ledger of every patch; the only room that imports browser-use."""
