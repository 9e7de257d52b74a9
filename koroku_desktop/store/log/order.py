"""The order entries are read in: synced events by hub order, then unsynced ones by seq.

Every device syncing with one hub sees the same events in the same order (the hub's), and
its own events not pushed yet after them in the order they were written. Without sync every
`hub_seq` is NULL and the order is plain `seq` order. The key is one SQL expression, indexed
by m007, so ordered reads and keyset paging stay index ranges.
"""

from __future__ import annotations

from koroku_desktop.domain.events import UNSYNCED_BASE

ORDER_KEY = f"COALESCE(hub_seq, {UNSYNCED_BASE} + seq)"
"""The SQL expression of an `events` row's place in entries' order (indexed by m007); the
same number as `StoredEvent.order_key`."""

KEY_OF_SEQ = f"COALESCE((SELECT {ORDER_KEY} FROM events WHERE seq = ?), {UNSYNCED_BASE} + ?)"
"""The order key of the row at a seq (two parameters: the seq twice); a seq with no row
(e.g. one past the end) sorts like an unsynced event written there."""
