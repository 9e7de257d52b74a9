"""The composition root: settings, secrets, paths, and the wiring of adapters into the agent.

The only package that imports the adapters (store, llm, mcp, sync) for the front ends. It
imports nothing here, so `app.config` loads without the runtime (and its SDKs).
"""
