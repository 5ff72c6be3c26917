"""The MCP server for coding agents (`preview-qa mcp`): tools that run the team's tests as `run` does, read their
results and export them; every path inside the folder the server started in, every result redacted, and the preview's
own text fenced as untrusted (docs/coding-agents.md)."""
