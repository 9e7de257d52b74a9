"""The Scheduled tasks section of Settings, in the whole app on a real log with an
injected clock: the list in words, New with the schedule previewed, Pause/Resume, Delete,
and what another process does showing up; screenshots at three sizes in both themes."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
import qasync
from PySide6.QtWidgets import QApplication, QMessageBox, QScrollArea
from pytestqt.qtbot import QtBot

from koroku_desktop.domain.schedules import Schedule
from koroku_desktop.ui.app import Desktop
from koroku_desktop.ui.tasks.editor import TaskEditor
from koroku_desktop.ui.tasks.panel import CHOOSE, TasksPanel
from koroku_desktop.ui.widgets import theme
from tests.fakes.chat_model import FakeChatModel
from tests.fakes.gemini_server import FakeGemini
from tests.ui.conftest import running_desktop
from tests.ui.screenshots import save_screenshot

NOW = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)  # a Thursday


def weekdays_at_eight() -> Schedule:
    start = datetime(2026, 12, 1, 7, 0, tzinfo=UTC)  # 08:00 in Berlin
    return Schedule("rrule", "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR", "Europe/Berlin", start)


@pytest.fixture
def desk(qloop: qasync.QEventLoop, qtbot: QtBot, fake_gemini: FakeGemini) -> Iterator[Desktop]:
    with running_desktop(qtbot, FakeChatModel(lambda _r: "ok")) as desk:
        desk.runtime.agent.clock = lambda: NOW
        yield desk


def open_tasks(desk: Desktop, qtbot: QtBot) -> TasksPanel:
    dialog = desk.show_settings()
    assert dialog.tasks is not None
    return dialog.tasks


def test_the_list_says_each_task_in_words(desk: Desktop, qtbot: QtBot) -> None:
    book = desk.tasks.book
    book.create(weekdays_at_eight(), prompt="Summarise ~/notes/inbox.md", title="Inbox")
    book.create(
        Schedule("once", "2026-12-03T17:00", "Europe/Berlin", NOW),
        prompt="Call the garage",
        reminder=True,
    )
    panel = open_tasks(desk, qtbot)
    qtbot.waitUntil(lambda: panel.table.topLevelItemCount() == 2, timeout=10000)
    rows = [
        [panel.table.topLevelItem(i).text(c) for c in range(4)]
        for i in range(panel.table.topLevelItemCount())
    ]
    assert rows[0] == ["Call the garage", rows[0][1], "today 17:00", "not run yet"]
    assert rows[1][0] == "Inbox"
    assert rows[1][1].startswith("every Monday–Friday at 08:00")
    assert rows[1][2] == "tomorrow 08:00"


def test_new_task_previews_the_next_runs_and_refuses_an_empty_prompt(
    desk: Desktop, qtbot: QtBot
) -> None:
    panel = open_tasks(desk, qtbot)
    editor = panel.new()
    assert isinstance(editor, TaskEditor)
    editor.kind.setCurrentIndex(1)  # recurring
    editor.repeat.setCurrentIndex(1)  # Monday–Friday
    editor.tz.setCurrentText("Europe/Berlin")
    assert "every Monday–Friday at 08:00, Europe/Berlin; next: tomorrow 08:00" in (
        editor.preview.text()
    )
    assert "then Mon 07 Dec 08:00, Tue 08 Dec 08:00" in editor.preview.text()
    save = editor.buttons.button(editor.buttons.StandardButton.Save)
    assert not save.isEnabled() and "Say what Koroku should do" in editor.error.text()
    editor.tz.setCurrentText("Mars/Olympus")
    assert not save.isEnabled() and "unknown time zone" in editor.error.text()
    editor.tz.setCurrentText("Europe/Berlin")
    editor.title.setText("Inbox")
    editor.prompt.setPlainText("Summarise ~/notes/inbox.md")
    assert save.isEnabled()
    save.click()
    qtbot.waitUntil(lambda: panel.table.topLevelItemCount() == 1, timeout=10000)
    (task,) = desk.tasks.book.list()
    assert task.title == "Inbox" and task.schedule.rule == "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR"
    assert task.next_due == datetime(2026, 12, 4, 7, 0, tzinfo=UTC)


def test_pause_resume_and_delete_write_events_and_the_list_follows(
    desk: Desktop, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    task = desk.tasks.book.create(weekdays_at_eight(), prompt="Inbox")
    panel = open_tasks(desk, qtbot)
    qtbot.waitUntil(lambda: panel.table.topLevelItemCount() == 1, timeout=10000)
    panel.table.topLevelItem(0).setSelected(True)
    panel.pause_button.click()
    qtbot.waitUntil(lambda: panel.table.topLevelItem(0).text(2) == "paused", timeout=10000)
    assert desk.tasks.book.get(task.id).paused
    panel.table.topLevelItem(0).setSelected(True)
    assert panel.pause_button.text() == "Resu&me"
    panel.pause_button.click()
    qtbot.waitUntil(lambda: panel.table.topLevelItem(0).text(2) != "paused", timeout=10000)
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Yes)
    panel.table.topLevelItem(0).setSelected(True)
    panel.delete_button.click()
    qtbot.waitUntil(lambda: panel.table.topLevelItemCount() == 0, timeout=10000)
    assert desk.tasks.book.list() == []


def test_the_details_line_never_says_no_tasks_over_a_listed_task(
    desk: Desktop, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    panel = open_tasks(desk, qtbot)
    qtbot.waitUntil(lambda: "No tasks yet" in panel.details.text(), timeout=10000)
    editor = panel.new()
    editor.title.setText("Inbox")
    editor.prompt.setPlainText("Summarise ~/notes/inbox.md")
    editor.buttons.button(editor.buttons.StandardButton.Save).click()
    qtbot.waitUntil(lambda: panel.table.topLevelItemCount() == 1, timeout=10000)
    assert "No tasks yet" not in panel.details.text()
    assert panel.details.text() == CHOOSE
    panel.table.topLevelItem(0).setSelected(True)
    assert panel.details.text().startswith("<b>Inbox</b>")
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Yes)
    panel.delete_button.click()
    qtbot.waitUntil(lambda: panel.table.topLevelItemCount() == 0, timeout=10000)
    assert "No tasks yet" in panel.details.text()


ANOTHER_PROCESS = """
import sys
from datetime import UTC, datetime
from koroku_desktop.agent.tasks import TaskBook
from koroku_desktop.domain.schedules import Schedule
from koroku_desktop.store import SqliteEventLog
now = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)
with SqliteEventLog(sys.argv[1]) as log:
    TaskBook(log, lambda: now).create(
        Schedule("once", "2026-12-24T09:00", "UTC", now), prompt="Wrap the presents"
    )
"""


def test_a_task_made_by_another_process_shows_up(desk: Desktop, qtbot: QtBot) -> None:
    panel = open_tasks(desk, qtbot)
    done = subprocess.run(
        [sys.executable, "-c", ANOTHER_PROCESS, str(desk.runtime.paths.db)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    qtbot.waitUntil(lambda: panel.table.topLevelItemCount() == 1, timeout=15000)
    assert panel.table.topLevelItem(0).text(0) == "Wrap the presents"
    qtbot.waitUntil(lambda: desk.tasks.scheduler.next_wake is not None, timeout=5000)


@pytest.mark.parametrize("mode", ["light", "dark"])
def test_screenshots_at_three_sizes(
    desk: Desktop, qtbot: QtBot, qapp: QApplication, mode: str
) -> None:
    book = desk.tasks.book
    book.create(
        weekdays_at_eight(),
        prompt="Summarise ~/notes/inbox.md and list what is due",
        title="Inbox summary",
        allowed_tools=["read_file"],
    )
    book.create(
        Schedule("once", "2026-12-03T17:00", "Europe/Berlin", NOW),
        prompt="Call the garage",
        reminder=True,
    )
    book.create(
        Schedule("cron", "*/30 9-17 * * 1-5", "UTC", NOW),
        prompt="Check the build",
        title="A long title for a task that checks the build every half hour",
    )
    theme.apply(qapp, mode)
    try:
        dialog = desk.show_settings()
        panel = dialog.tasks
        assert panel is not None
        qtbot.waitUntil(lambda: panel.table.topLevelItemCount() == 3, timeout=10000)
        panel.table.topLevelItem(0).setSelected(True)
        scroll = dialog.findChild(QScrollArea)
        for name, (w, h) in (("400", (400, 700)), ("900", (900, 760)), ("1600", (1600, 900))):
            dialog.resize(w, h)
            qapp.processEvents()
            scroll.ensureWidgetVisible(panel, 0, 0)
            scroll.horizontalScrollBar().setValue(0)
            qapp.processEvents()
            assert dialog.width() == w, f"Settings cannot be {w} px wide"
            if w == 400:  # the section fits (Settings' Memory group is wider: it scrolls)
                assert panel.parentWidget().minimumSizeHint().width() <= 380
            save_screenshot(dialog, f"tasks-{mode}-{name}")
            assert panel.table.isColumnHidden(2) == (panel.width() < 620)
            for button in (panel.new_button, panel.delete_button):
                assert button.width() >= button.minimumSizeHint().width()
        editor = panel.edit()
        assert editor is not None
        for name, width in (("400", 400), ("900", 700)):
            editor.resize(width, editor.sizeHint().height())
            qapp.processEvents()
            save_screenshot(editor, f"task-editor-{mode}-{name}")
        editor.reject()
    finally:
        theme.apply(qapp, "light")
