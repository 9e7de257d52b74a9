"""Tools the model can call: the AgentTool base, built-ins, user tools, approval policy."""
