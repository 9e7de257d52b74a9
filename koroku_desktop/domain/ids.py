"""Globally unique, time-sortable ids (UUIDv7, RFC 9562) for events and turns.

Every event gets one when it is first appended; a later multi-device sync merges logs on it
(a re-delivered event with a known id is ignored). Ids made in one process sort in the order
they were made, even within one millisecond (the 12-bit `rand_a` field is a counter then),
and after every id the log holds when they are appended (`observe`).
Rows written before ids existed get a deterministic id from what the row holds (`legacy_id`),
so two copies of one old database backfill the same ids.
"""

from __future__ import annotations

import hashlib
import os
import socket
import threading
import time
import uuid

_lock = threading.Lock()
_last_ms = 0
_counter = 0


def _build(ms: int, rand_a: int, rand_b: int) -> str:
    value = (ms & ((1 << 48) - 1)) << 80
    value |= 0x7 << 76
    value |= (rand_a & 0xFFF) << 64
    value |= 0b10 << 62
    value |= rand_b & ((1 << 62) - 1)
    return str(uuid.UUID(int=value))


def new_id() -> str:
    """A fresh UUIDv7 string, monotonic within this process."""
    global _last_ms, _counter
    with _lock:
        ms = time.time_ns() // 1_000_000
        if ms <= _last_ms:
            _counter += 1
            if _counter > 0xFFF:  # 4096 ids in one millisecond: borrow the next one
                _last_ms += 1
                _counter = 0
            ms = _last_ms
        else:
            _last_ms = ms
            _counter = int.from_bytes(os.urandom(2), "big") & 0x3FF  # room to count up
        rand_a = _counter
    return _build(ms, rand_a, int.from_bytes(os.urandom(8), "big"))


def observe(value: str) -> None:
    """Make this process's next ids sort after `value` (the newest id in the log), so an event
    appended after another was seen sorts after it even when that one came from a device
    whose clock runs ahead (a hybrid logical clock)."""
    global _last_ms, _counter
    try:
        number = uuid.UUID(value).int
    except (ValueError, AttributeError, TypeError):
        return
    ms, rand_a = number >> 80, (number >> 64) & 0xFFF
    with _lock:
        if ms > _last_ms or (ms == _last_ms and rand_a > _counter):
            _last_ms, _counter = ms, rand_a


def legacy_id(created_at: float, *material: object) -> str:
    """A deterministic UUIDv7 for a row written before ids existed (its time, then a hash)."""
    digest = hashlib.sha256("\x1f".join(str(m) for m in material).encode("utf-8")).digest()
    ms = max(0, int(created_at * 1000)) if created_at == created_at else 0  # NaN -> 0
    return _build(ms, int.from_bytes(digest[:2], "big"), int.from_bytes(digest[2:10], "big"))


def id_time(value: str) -> float:
    """The creation time (seconds) encoded in a UUIDv7."""
    return (uuid.UUID(value).int >> 80) / 1000.0


def writer_name(front_end: str, host: str | None = None) -> str:
    """The `writer` recorded on events: `<front end>@<host>` (e.g. `ask@laptop`)."""
    return f"{front_end}@{host or socket.gethostname()}"


def new_conversation_id() -> str:
    """A fresh conversation id: a random UUID (v4), so that its first characters tell
    conversations apart (a time-sortable id's prefix is the same for a minute)."""
    return str(uuid.uuid4())
