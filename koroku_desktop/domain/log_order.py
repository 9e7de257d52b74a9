"""The one order entries are read in, as a number (pure; no pydantic, so the fast readers
of the log can use it too): see `StoredEvent.order_key`."""

from __future__ import annotations

UNSYNCED_BASE = 1 << 62
"""Added to the seq of an event not synced yet to make its order key: above any position a
sync hub will ever hand out (see `StoredEvent.order_key`)."""


def order_key(seq: int, hub_seq: int | None) -> int:
    """An entry's place in the log's one order: the hub's position, else after every
    synced one, in this log's order."""
    return hub_seq if hub_seq is not None else UNSYNCED_BASE + seq
