"""The History & memory viewer: timeline, search, compactions, memory files and export."""
