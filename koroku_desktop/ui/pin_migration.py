"""Pins kept in ui.ini before they were events: moved into the log once.

Earlier versions kept the sidebar's pins as window state (`sidebar/pinned` in ui.ini), on
one device only. Now a pin is a `conversation` event (it syncs and `koroku conversations`
shows it). The first start that finds the ini key appends a `pinned` event for each
conversation it names that is not pinned yet, then drops the key; if the log cannot be
written the key stays and the next start tries again, so nothing is lost.
"""

from __future__ import annotations

from PySide6.QtCore import QSettings

from koroku_desktop.agent.conversations import ConversationBook

PINNED_KEY = "sidebar/pinned"


def ini_pins(settings: QSettings) -> set[str]:
    """The ids ui.ini still holds as pinned (empty: none, or moved already)."""
    value = settings.value(PINNED_KEY, [])
    found = {str(v) for v in value} if isinstance(value, list) else {str(value)}
    return found - {""}


def pin_in_log(book: ConversationBook, ids: set[str]) -> int:
    """Append a `pinned` event for each of `ids` the log knows and has not pinned (ids of
    conversations it does not hold are dropped). Blocking; returns how many were pinned."""
    every = book.all(counts=False)
    moved = 0
    for cid in sorted(ids):
        found = every.get(cid)
        if found is not None and not found.pinned:
            book.pin(cid)
            moved += 1
    return moved


def forget_ini_pins(settings: QSettings) -> None:
    """Drop the ini key (after `pin_in_log` succeeded)."""
    settings.remove(PINNED_KEY)
    settings.sync()
