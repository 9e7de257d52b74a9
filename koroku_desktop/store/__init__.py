"""The event log on SQLite via Peewee: the only Peewee importer in the app (store/database.py).

`SqliteEventLog` is loaded on first use, so a module of the package that needs no event log
(e.g. store/log/task_rows.py, what `koroku tasks run-due` reads first) starts without it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from koroku_desktop.store.log.event_log import SqliteEventLog, StoreClosedError

__all__ = ["SqliteEventLog", "StoreClosedError"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from koroku_desktop.store.log import event_log

        return getattr(event_log, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
