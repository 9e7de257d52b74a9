"""The event log on SQLite via Peewee: the only Peewee importer in the app."""

import sys

# Peewee imports psycopg at import time for a PostgreSQL database Koroku never opens through
# it (the sync hub uses psycopg itself): that cost most of a `koroku search` cold start. So
# peewee is imported here with psycopg hidden, and psycopg stays importable afterwards.
if "peewee" not in sys.modules and "psycopg" not in sys.modules:
    sys.modules["psycopg"] = None  # type: ignore[assignment]
    try:
        import peewee  # noqa: F401
    finally:
        del sys.modules["psycopg"]

from koroku_desktop.store.log.event_log import SqliteEventLog, StoreClosedError

__all__ = ["SqliteEventLog", "StoreClosedError"]
