"""The desktop app brings the memory files up to date after its window is up (not while
building the runtime): a file edited while Koroku was closed is taken into the log."""

from __future__ import annotations

import logging
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from types import FrameType

import pytest
import qasync
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from koroku_desktop.agent.memory_events import MEMORY_KEY, sync_memory_files_leased
from koroku_desktop.app.config import default_paths
from koroku_desktop.app.runtime import build_runtime
from koroku_desktop.ui.app import open_desktop
from tests.fakes.gemini_server import FakeGemini
from tests.support.processes import ROOT
from tests.support.waits import settle, wait_until
from tests.test_memory_on_start import a_file_edited_while_closed, outside_edits
from tests.test_settings_store import NoApprover
from tests.ui.conftest import run, running_desktop


def test_the_app_takes_in_a_memory_file_edited_while_closed(
    qloop: qasync.QEventLoop, qtbot: QtBot, fake_gemini: FakeGemini, workspace: Path
) -> None:
    a_file_edited_while_closed(0)
    with running_desktop(qtbot):
        qtbot.waitUntil(lambda: len(outside_edits()) == 1, timeout=20_000)
        assert outside_edits()[0].text.endswith("corrected by hand, round 0\n")


HOLD_THE_LEASE = """
import sys
from pathlib import Path
from koroku_desktop.agent.memory_events import MEMORY_KEY
from koroku_desktop.store.local_lease import SqliteTurnLock
lease = SqliteTurnLock(Path(sys.argv[1]), "holder")
assert lease.try_acquire(MEMORY_KEY, "syncing") is None
print("held", flush=True)
sys.stdin.read()  # until the test closes it
lease.release(MEMORY_KEY)
lease.close()
"""


def test_quitting_while_another_process_holds_the_memory_files_lease_does_not_hang(
    qloop: qasync.QEventLoop,
    qtbot: QtBot,
    fake_gemini: FakeGemini,
    workspace: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    a_file_edited_while_closed(0)
    db = default_paths().db
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_THE_LEASE, str(db)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        app = QApplication.instance()
        assert isinstance(app, QApplication)
        desk = open_desktop(app, default_paths(), use_tray=True)
        try:
            run(qtbot, desk.start())
            qtbot.waitUntil(lambda: syncs_waiting() > 0, timeout=20_000)  # for the holder
            assert desk.memory_sync is not None and not desk.memory_sync.done()
            with caplog.at_level(logging.INFO):
                run(qtbot, desk.quit(), timeout=10_000)  # a few seconds at most
            assert "left for the next start" in caplog.text
            wait_until(lambda: syncs_waiting() == 0, timeout=5)  # no thread left waiting
            assert outside_edits() == []  # not taken in now ...
            assert lease_pid(db, MEMORY_KEY) != os.getpid()
        finally:
            for widget in (desk.popup, desk.window):
                widget.close()
                widget.deleteLater()
            desk.deleteLater()
            settle()
    finally:
        holder.communicate("", timeout=30)
    runtime = build_runtime(NoApprover())
    try:  # ... but by the next start
        assert run(qtbot, runtime.sync_memory())
        assert len(outside_edits()) == 1
    finally:
        runtime.close()


def syncs_waiting() -> int:
    """The threads of this process inside a memory files sync (waiting for its lease)."""
    code = sync_memory_files_leased.__code__
    found = 0
    for frame in sys._current_frames().values():
        at: FrameType | None = frame
        while at is not None and at.f_code is not code:
            at = at.f_back
        found += at is not None
    return found


def lease_pid(db: Path, conversation_id: str) -> int | None:
    with sqlite3.connect(db) as conn:
        row = conn.execute(
            "SELECT pid FROM turn_leases WHERE conversation_id = ?", (conversation_id,)
        ).fetchone()
    return None if row is None else int(row[0])
