"""Message times shown on hover: the time today, the date otherwise."""

from __future__ import annotations

import time

from koroku_desktop.ui.chat.text_painters import when


def test_times_read_naturally() -> None:
    now = time.mktime((2026, 11, 30, 15, 0, 0, 0, 0, -1))
    assert when(0.0, now) == ""
    assert when(now - 3600, now) == "14:00"
    assert when(time.mktime((2026, 3, 3, 9, 5, 0, 0, 0, -1)), now) == "3 Mar 09:05"
    assert when(time.mktime((2025, 12, 31, 23, 59, 0, 0, 0, -1)), now) == "31 Dec 2025 23:59"
