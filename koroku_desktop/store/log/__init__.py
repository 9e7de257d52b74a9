"""The event log on SQLite: rows, order, paging, the live load, coverage, migrations."""
