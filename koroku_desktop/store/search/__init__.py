"""Full-text search: the FTS5 index, its queries, each event's searchable text."""
