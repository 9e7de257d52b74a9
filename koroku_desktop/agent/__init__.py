"""The agent loop, hooks, compaction, memory files and prompts. Async, no Qt."""
