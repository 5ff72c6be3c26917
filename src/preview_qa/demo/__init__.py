"""`preview-qa demo` and `demo --plan`, offline: the demo shop, the scripted LLM server (any provider's protocol), the run."""
