"""The viewer's memory panel records a save as a `memory_edit` event: the file is written
from the log, and a summary appended meanwhile (unseen by the editor) is kept."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial

import pytest
import qasync
from pytestqt.qtbot import QtBot

from koroku_desktop.agent.memory_events import record_edit, sync_memory_files
from koroku_desktop.app.config import Paths, default_paths
from koroku_desktop.domain.events import MemoryEditEvent, StoredEvent
from koroku_desktop.store import SqliteEventLog
from koroku_desktop.ui.viewer.memory_panel import MemoryPanel
from tests.ui.conftest import run
from tests.ui.screenshots import save_screenshot

DAY = "03-02-2025"


@pytest.fixture
def paths() -> Paths:
    return default_paths()


@pytest.fixture
def event_log(paths: Paths) -> Iterator[SqliteEventLog]:
    paths.home.mkdir(parents=True, exist_ok=True)
    log = SqliteEventLog(paths.db)
    log.append("default", [MemoryEditEvent(day=DAY, op="append", text="[09:00]: first\n\n")])
    sync_memory_files(log, "default", paths.home)
    yield log
    log.close()


def edits(log: SqliteEventLog) -> list[MemoryEditEvent]:
    return [
        e.event
        for e in log.entries(kinds=["memory_edit"])
        if isinstance(e, StoredEvent) and isinstance(e.event, MemoryEditEvent)
    ]


def test_a_save_is_an_event_and_keeps_a_summary_appended_meanwhile(
    qloop: qasync.QEventLoop, qtbot: QtBot, paths: Paths, event_log: SqliteEventLog
) -> None:
    panel = MemoryPanel(paths.memory, record=partial(record_edit, event_log, "default", paths.home))
    qtbot.addWidget(panel)
    panel.resize(900, 500)
    panel.show()
    panel.refresh()
    panel.start_editing()
    panel.editor.setPlainText("[09:00]: first, corrected\n\n")
    # Another device's compaction arrives meanwhile (merged into the log, not yet on disk).
    event_log.append(
        "default", [MemoryEditEvent(day=DAY, op="append", text="[10:00]: from elsewhere\n\n")]
    )

    assert panel.save() is True
    assert panel.saving is not None and run(qtbot, panel.saving) is True

    expected = "[09:00]: first, corrected\n\n[10:00]: from elsewhere\n\n"
    assert (paths.memory / f"{DAY}.md").read_text(encoding="utf-8") == expected
    assert panel.editor.toPlainText() == expected and not panel.editing
    last = edits(event_log)[-1]
    assert (last.op, last.source, last.text) == (
        "replace",
        "person",
        "[09:00]: first, corrected\n\n",
    )
    save_screenshot(panel, "memory_panel_saved_as_event")


def test_a_failed_recording_keeps_the_edit_and_says_why(
    qloop: qasync.QEventLoop, qtbot: QtBot, paths: Paths, event_log: SqliteEventLog
) -> None:
    def broken(day: str, text: str, base: str) -> str:
        raise OSError("disk full")

    panel = MemoryPanel(paths.memory, record=broken)
    qtbot.addWidget(panel)
    panel.refresh()
    panel.start_editing()
    panel.editor.setPlainText("my edit\n")
    panel.save()
    assert panel.saving is not None and run(qtbot, panel.saving) is False
    assert panel.editing and panel.editor.toPlainText() == "my edit\n"
    assert "disk full" in panel.note_label.text()
    assert (paths.memory / f"{DAY}.md").read_text(encoding="utf-8") == "[09:00]: first\n\n"
