"""The event log on SQLite via Peewee: the only Peewee importer in the app."""

from koroku_desktop.store.log.event_log import SqliteEventLog, StoreClosedError

__all__ = ["SqliteEventLog", "StoreClosedError"]
