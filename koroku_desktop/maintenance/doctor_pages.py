"""Reading `events` rows straight from the pages of a damaged SQLite file.

When the file's tree pages are gone (a truncated file, garbage over the schema), SQLite cannot
reach rows that are still intact on their leaf pages. This scans every page of the file for
table-leaf cells whose record has the exact shape of an `events` row
(seq alias, conversation_id, kind, schema_version, payload, created_at) and decodes it,
following overflow pages where they still exist. Used by `koroku doctor --recover` only.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from pathlib import Path

from koroku_desktop.store.log.rows import Row

_LEAF = 0x0D
_INTS = {1: 1, 2: 2, 3: 3, 4: 4, 5: 6, 6: 8}


def _varint(buf: bytes, i: int) -> tuple[int, int]:
    value = 0
    for n in range(9):
        if i + n >= len(buf):
            raise ValueError("varint runs past the page")
        byte = buf[i + n]
        if n == 8:
            return (value << 8) | byte, i + 9
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value, i + n + 1
    raise ValueError("bad varint")  # pragma: no cover


def _value(kind: int, buf: bytes, i: int) -> tuple[object, int]:
    if kind == 0:
        return None, i
    if kind in _INTS:
        size = _INTS[kind]
        return int.from_bytes(buf[i : i + size], "big", signed=True), i + size
    if kind == 7:
        return struct.unpack(">d", buf[i : i + 8])[0], i + 8
    if kind in (8, 9):
        return kind - 8, i
    if kind >= 12:
        size = (kind - 12) // 2
        raw = bytes(buf[i : i + size])
        if len(raw) != size:
            raise ValueError("value runs past the record")
        return raw, i + size
    raise ValueError(f"reserved serial type {kind}")


def _record(payload: bytes) -> list[tuple[int, object]]:
    header_size, i = _varint(payload, 0)
    kinds: list[int] = []
    while i < header_size:
        kind, i = _varint(payload, i)
        kinds.append(kind)
    out: list[tuple[int, object]] = []
    at = header_size
    for kind in kinds:
        value, at = _value(kind, payload, at)
        out.append((kind, value))
    return out


def _as_event_row(rowid: int, fields: list[tuple[int, object]]) -> Row | None:
    """The row if the record has the shape of an `events` row, else None."""
    if len(fields) not in (6, 9, 10) or fields[0][0] != 0:
        return None  # 6 columns before migration m004, 9 (with the ids) after it, 10 after m007
    (_, _), (ck, conv), (kk, kind), (vk, version), (pk, payload), (tk, created) = fields[:6]
    identity = [_identity_text(value) for _, value in fields[6:9]]  # not m007's hub_seq
    if not (ck >= 13 and ck % 2 and kk >= 13 and kk % 2 and pk >= 12):
        return None
    if vk not in (*_INTS, 8, 9) or tk not in (*_INTS, 7, 8, 9):
        return None
    assert isinstance(conv, bytes) and isinstance(kind, bytes)
    try:
        conversation_id, kind_text = conv.decode("utf-8"), kind.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return (rowid, conversation_id, kind_text, version, payload, created, *identity)


def _identity_text(value: object) -> str | None:
    """An id column's value as text (None where it is NULL or unreadable)."""
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace") or None
    return None


class _File:
    def __init__(self, data: bytes) -> None:
        self.data = data
        size = int.from_bytes(data[16:18], "big") if len(data) >= 100 else 0
        self.page_size = 65536 if size == 1 else size
        if self.page_size < 512 or self.page_size & (self.page_size - 1):
            self.page_size = 4096  # the header is damaged too: assume the default
        reserved = data[20] if len(data) > 20 else 0
        self.usable = self.page_size - reserved

    def page(self, number: int) -> bytes:
        start = (number - 1) * self.page_size
        return self.data[start : start + self.page_size]

    def payload(self, page: bytes, at: int) -> tuple[int, bytes] | None:
        """(rowid, payload) of the cell at `at`, overflow pages followed; None if cut off."""
        size, i = _varint(page, at)
        rowid, i = _varint(page, i)
        usable = self.usable
        most = usable - 35
        if size <= most:
            local = size
        else:
            least = ((usable - 12) * 32 // 255) - 23
            local = least + (size - least) % (usable - 4)
            if local > most:
                local = least
        body = bytearray(page[i : i + local])
        if local < size:
            next_page = int.from_bytes(page[i + local : i + local + 4], "big")
            seen: set[int] = set()
            while len(body) < size and next_page and next_page not in seen:
                seen.add(next_page)
                over = self.page(next_page)
                if len(over) < self.page_size:
                    return None
                next_page = int.from_bytes(over[:4], "big")
                body.extend(over[4 : 4 + min(usable - 4, size - len(body))])
        if len(body) != size:
            return None
        return rowid, bytes(body)


def scan_pages(path: Path) -> Iterator[Row]:
    """Every intact `events` row found on the leaf pages of `path`, in page order."""
    file = _File(path.read_bytes())
    pages = len(file.data) // file.page_size
    for number in range(1, pages + 1):
        page = file.page(number)
        head = 100 if number == 1 else 0
        if page[head] != _LEAF:
            continue
        cells = int.from_bytes(page[head + 3 : head + 5], "big")
        for k in range(cells):
            pointer_at = head + 8 + 2 * k
            at = int.from_bytes(page[pointer_at : pointer_at + 2], "big")
            if not head + 8 <= at < len(page):
                continue
            try:
                cell = file.payload(page, at)
                if cell is None:
                    continue
                row = _as_event_row(cell[0], _record(cell[1]))
            except (ValueError, IndexError, struct.error):
                continue
            if row is not None:
                yield row
