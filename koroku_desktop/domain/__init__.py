"""Pure values: parts, events, the context projection. Imports pydantic only."""
