"""Real MCP servers written with the `mcp` SDK, started as subprocesses by the tests."""
