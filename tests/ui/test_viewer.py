"""The History & memory viewer on a real event log file: timeline, search, filters, memory."""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import qasync
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from koroku_desktop.app.config import Paths, default_paths
from koroku_desktop.app.exports import export_writer
from koroku_desktop.domain.events import ClearedEvent, CompactionEvent, MessageEvent
from koroku_desktop.domain.parts import FunctionCallPart, FunctionResponsePart, TextPart
from koroku_desktop.store import SqliteEventLog
from koroku_desktop.ui.viewer.dialog import HistoryDialog
from koroku_desktop.ui.viewer.export import CHOICES
from koroku_desktop.ui.viewer.memory_panel import MemoryPanel
from koroku_desktop.ui.viewer.timeline_model import COLUMNS
from koroku_desktop.ui.widgets import theme
from tests.support.waits import settle
from tests.ui.conftest import run
from tests.ui.screenshots import save_screenshot

DAY = 86_400.0


def _msg(role: str, text: str) -> MessageEvent:
    return MessageEvent(role=role, parts=[TextPart(text=text)])


def _raw_insert(db: Path, kind: str, payload: str, created_at: float, text: str = "") -> int:
    """Insert a row behind the store's back (plain sqlite3), as an old or broken version would."""
    with sqlite3.connect(db) as conn:
        cur = conn.execute(
            "INSERT INTO events (conversation_id, kind, schema_version, payload, created_at)"
            " VALUES ('default', ?, 1, ?, ?)",
            (kind, payload, created_at),
        )
        seq = int(cur.lastrowid or 0)
        if text:
            conn.execute("INSERT INTO events_fts (rowid, body) VALUES (?, ?)", (seq, text))
        return seq


@pytest.fixture
def paths() -> Paths:
    return default_paths()


@pytest.fixture
def event_log(paths: Paths) -> Iterator[SqliteEventLog]:
    """A log with old history, a compaction, a clear, a damaged row and a tool exchange."""
    log = SqliteEventLog(paths.db)
    old = time.time() - 10 * DAY
    for text in ("an old question about zebras", "an old answer about zebras"):
        role = "user" if "question" in text else "model"
        payload = json.dumps(
            {"kind": "message", "role": role, "parts": [{"kind": "text", "text": text}]}
        )
        _raw_insert(paths.db, "message", payload, old, text)
    log.append("default", [_msg("user", "how do I list files?"), _msg("model", "use ls")])
    log.append(
        "default",
        [
            CompactionEvent(
                summary="We talked about **zebras** and listing files.",
                covers_up_to_seq=4,
                kept_from_seq=5,
                tokens_before=120_000,
                tokens_after=4_200,
            )
        ],
    )
    log.append("default", [_msg("user", "something before the clear")])
    log.append("default", [ClearedEvent()])
    _raw_insert(paths.db, "message", "{this is not json", time.time())
    call = FunctionCallPart(name="bash", args={"command": "ls ~"}, id="c1")
    log.append(
        "default",
        [
            _msg("user", "what is in my home folder?"),
            MessageEvent(role="model", parts=[call]),
            MessageEvent(
                role="user",
                parts=[
                    FunctionResponsePart(
                        name="bash",
                        response={"stdout": "Documents\nMusic"},
                        id="c1",
                        call_args={"command": "ls ~"},
                    )
                ],
            ),
            _msg("model", "You have Documents and Music."),
        ],
    )
    try:
        yield log
    finally:
        log.close()


def _open(qtbot: QtBot, log: SqliteEventLog, paths: Paths) -> HistoryDialog:
    dialog = HistoryDialog(log, export_writer(log, "default"), paths.memory, "default")
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitUntil(
        lambda: dialog.timeline.model.rowCount() > 0 and not dialog.timeline.model.loading
    )
    return dialog


def _column(dialog: HistoryDialog, col: int) -> list[str]:
    model = dialog.timeline.model
    return [model.index(r, col).data() for r in range(model.rowCount())]


def test_timeline_shows_every_event_newest_first(
    qloop: qasync.QEventLoop, qtbot: QtBot, event_log: SqliteEventLog, paths: Paths
) -> None:
    dialog = _open(qtbot, event_log, paths)
    seqs = [int(s) for s in _column(dialog, 0)]
    assert seqs == sorted(seqs, reverse=True) and len(seqs) == event_log.count() == 12
    kinds = dict(zip(seqs, _column(dialog, 2), strict=True))
    assert kinds[5] == "compaction" and kinds[7] == "cleared" and kinds[8] == "damaged"
    context = dict(zip(seqs, _column(dialog, 4), strict=True))
    assert context[1] == "summarised in #5" and context[4] == "summarised in #5"
    assert context[6] == "cleared at #7"
    assert context[12] == "live" and context[8] == "skipped (damaged)"
    content = dict(zip(seqs, _column(dialog, 5), strict=True))
    assert content[8].startswith("⚠ damaged message row")
    assert "→ bash" in content[10] and "✓ bash" in content[11]
    # The detail pane: readable, and the raw JSON on demand.
    dialog.timeline.select_row(dialog.timeline.model.row_of_seq(8))
    assert "damaged" in dialog.timeline.detail.readable.toPlainText()
    dialog.timeline.detail.raw_button.click()
    assert dialog.timeline.detail.raw.toPlainText() == "{this is not json"
    dialog.timeline.select_row(dialog.timeline.model.row_of_seq(10))
    assert '"command": "ls ~"' in dialog.timeline.detail.raw.toPlainText()
    dialog.timeline.detail.raw_button.click()
    assert "Tool call → bash" in dialog.timeline.detail.readable.toPlainText()


def test_kind_and_date_filters(
    qloop: qasync.QEventLoop, qtbot: QtBot, event_log: SqliteEventLog, paths: Paths
) -> None:
    dialog = _open(qtbot, event_log, paths)
    panel = dialog.timeline
    panel.kind_boxes["message"].setChecked(False)
    qtbot.waitUntil(lambda: not panel.model.loading and panel.model.query.kinds is not None)
    assert sorted(_column(dialog, 2)) == ["cleared", "compaction"]
    panel.kind_boxes["message"].setChecked(True)
    # Only the two old rows are 10 days old.
    day = panel.date_from.date().currentDate().addDays(-10)
    panel.date_from.setDate(day)
    panel.date_to.setDate(day)
    run(qtbot, panel.apply_filters())
    panel.date_box.setChecked(True)
    qtbot.waitUntil(lambda: not panel.model.loading)
    run(qtbot, panel.apply_filters())
    assert [int(s) for s in _column(dialog, 0)] == [2, 1]
    panel.date_from.setDate(day.addDays(1))
    panel.date_to.setDate(day.addDays(10))
    run(qtbot, panel.apply_filters())
    assert [int(s) for s in _column(dialog, 0)] == list(range(12, 2, -1))


def test_search_jumps_to_the_event_in_the_timeline(
    qloop: qasync.QEventLoop, qtbot: QtBot, event_log: SqliteEventLog, paths: Paths
) -> None:
    # Push the zebra rows far below the first page.
    event_log.append("default", [_msg("user", f"filler message {i}") for i in range(700)])
    dialog = _open(qtbot, event_log, paths)
    assert dialog.timeline.model.row_of_seq(1) == -1, "seq 1 is not loaded yet"
    dialog.show_tab("Search")
    dialog.search.box.setText("zebras")
    hits = run(qtbot, dialog.search.search_now())
    assert [h.seq for h in hits] == [5, 2, 1]
    assert "[[zebras]]" in hits[1].snippet
    dialog.search.activate_row(2)
    qtbot.waitUntil(lambda: dialog.timeline.detail.entry is not None)
    assert dialog.tabs.currentWidget() is dialog.timeline
    assert dialog.timeline.detail.entry is not None and dialog.timeline.detail.entry.seq == 1
    selected = dialog.timeline.table.selectionModel().selectedRows()
    assert [dialog.timeline.model.entry_at(i.row()).seq for i in selected] == [1]  # type: ignore[union-attr]
    assert dialog.timeline.jump_bar.isVisibleTo(dialog)
    dialog.timeline.show_newest()
    qtbot.waitUntil(lambda: not dialog.timeline.jump_bar.isVisibleTo(dialog))
    qtbot.waitUntil(lambda: dialog.timeline.model.rowCount() > 0)
    assert dialog.timeline.model.entry_at(0).seq == event_log.count()  # type: ignore[union-attr]


def test_timeline_pages_lazily(
    qloop: qasync.QEventLoop, qtbot: QtBot, event_log: SqliteEventLog, paths: Paths
) -> None:
    event_log.append("default", [_msg("user", f"filler {i}") for i in range(1000)])
    dialog = _open(qtbot, event_log, paths)
    model = dialog.timeline.model
    assert model.rowCount() == 200 and model.canFetchMore()
    dialog.timeline.table.scrollToBottom()
    qtbot.waitUntil(lambda: model.rowCount() >= 400)


def test_compactions_panel_lists_summaries_and_the_events_they_replaced(
    qloop: qasync.QEventLoop, qtbot: QtBot, event_log: SqliteEventLog, paths: Paths
) -> None:
    dialog = _open(qtbot, event_log, paths)
    dialog.show_tab("Compactions")
    panel = dialog.compactions
    qtbot.waitUntil(lambda: panel.list.topLevelItemCount() == 1)
    item = panel.list.topLevelItem(0)
    assert item is not None
    assert [item.text(c) for c in (0, 2, 3)] == ["5", "#1 – #4", "120,000 → 4,200 tokens"]
    qtbot.waitUntil(lambda: panel.replaced.rowCount() == 4)
    assert [panel.replaced.entry_at(r).seq for r in range(4)] == [4, 3, 2, 1]  # type: ignore[union-attr]
    assert "zebras" in panel.summary.toPlainText()


def test_memory_edit_is_saved_atomically_and_survives_a_reopen(
    qloop: qasync.QEventLoop, qtbot: QtBot, paths: Paths, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths.memory.mkdir(parents=True, exist_ok=True)
    (paths.memory / "01-02-2025.md").write_text("[09:00]: older day\n\n", encoding="utf-8")
    newest = paths.memory / "03-02-2025.md"
    newest.write_text("[10:00]: We chose **SQLite**.\n\n", encoding="utf-8")
    replaced: list[tuple[str, str]] = []
    real_replace = os.replace

    def spy(src: str, dst: str) -> None:
        replaced.append((str(src), str(dst)))
        real_replace(src, dst)

    panel = MemoryPanel(paths.memory)
    qtbot.addWidget(panel)
    panel.refresh()
    assert [panel.files.item(i).text() for i in range(2)] == [
        "Monday 03 February 2025",
        "Saturday 01 February 2025",
    ]
    assert panel.current == newest
    assert "SQLite" in panel.view.toPlainText() and "**" not in panel.view.toPlainText()
    panel.edit_button.click()
    panel.editor.setPlainText("[10:00]: We chose **SQLite**, for good.\n")
    monkeypatch.setattr("koroku_desktop.fsutil.os.replace", spy)
    panel.save_button.click()
    assert newest.read_text(encoding="utf-8") == "[10:00]: We chose **SQLite**, for good.\n"
    assert len(replaced) == 1 and Path(replaced[0][0]).parent == paths.memory
    assert replaced[0][1] == str(newest)
    assert not panel.editing and list(paths.memory.glob(".*.tmp")) == []
    reopened = MemoryPanel(paths.memory)
    qtbot.addWidget(reopened)
    reopened.refresh()
    assert "for good" in reopened.view.toPlainText()


def test_memory_notices_a_change_on_disk_while_editing(
    qloop: qasync.QEventLoop, qtbot: QtBot, paths: Paths
) -> None:
    paths.memory.mkdir(parents=True, exist_ok=True)
    file = paths.memory / "03-02-2025.md"
    file.write_text("[10:00]: first\n\n", encoding="utf-8")
    panel = MemoryPanel(paths.memory)
    qtbot.addWidget(panel)
    panel.show()
    panel.refresh()
    panel.start_editing()
    panel.editor.setPlainText("[10:00]: first, edited\n")
    with file.open("a", encoding="utf-8") as out:  # a compaction appends meanwhile
        out.write("[11:00]: second\n\n")
    assert panel.save() is False
    assert panel.note.isVisibleTo(panel) and "changed on disk" in panel.note_label.text()
    assert "second" in file.read_text(encoding="utf-8"), "nothing was overwritten"
    assert panel.editing, "the edit is kept"
    panel.keep_mine.click()
    assert file.read_text(encoding="utf-8") == "[10:00]: first, edited\n"
    assert not panel.note.isVisibleTo(panel)


def test_export_writes_the_koroku_export_formats(
    qloop: qasync.QEventLoop,
    qtbot: QtBot,
    event_log: SqliteEventLog,
    paths: Paths,
    tmp_path: Path,
) -> None:
    dialog = _open(qtbot, event_log, paths)
    md, js = tmp_path / "log.md", tmp_path / "log.json"
    message = run(qtbot, dialog.exporter.export_to(CHOICES[0], md), timeout=60000)
    assert message.startswith("Exported 12 event(s)"), message
    assert "use ls" in md.read_text(encoding="utf-8")
    run(qtbot, dialog.exporter.export_to(CHOICES[1], js), timeout=60000)
    data = json.loads(js.read_text(encoding="utf-8"))
    assert data["format"] == "koroku-export" and len(data["events"]) == 12
    assert dialog.status.text() == f"Exported 12 event(s) to {js}"


def test_screenshots_of_every_tab(
    qapp: QApplication,
    qloop: qasync.QEventLoop,
    qtbot: QtBot,
    event_log: SqliteEventLog,
    paths: Paths,
) -> None:
    paths.memory.mkdir(parents=True, exist_ok=True)
    (paths.memory / "03-02-2025.md").write_text(
        "[10:00]: We talked about **zebras** and how to list files with `ls`.\n\n"
        "[11:30]: The user keeps notes in ~/Documents/notes.\n\n",
        encoding="utf-8",
    )
    theme.apply(qapp, "light")
    dialog = _open(qtbot, event_log, paths)
    dialog.timeline.select_row(dialog.timeline.model.row_of_seq(10))
    qtbot.waitUntil(lambda: dialog.timeline.detail.entry is not None)
    settle()
    save_screenshot(dialog, "viewer-timeline")
    dialog.show_tab("Search")
    dialog.search.box.setText("zebras")
    assert run(qtbot, dialog.search.search_now())
    settle()
    save_screenshot(dialog, "viewer-search")
    dialog.show_tab("Compactions")
    qtbot.waitUntil(lambda: dialog.compactions.replaced.rowCount() == 4)
    settle()
    save_screenshot(dialog, "viewer-compactions")
    dialog.show_tab("Memory")
    qtbot.waitUntil(lambda: "zebras" in dialog.memory.view.toPlainText())
    settle()
    save_screenshot(dialog, "viewer-memory")


def test_the_timeline_reads_like_a_history_grouped_by_day(
    qloop: qasync.QEventLoop,
    qtbot: QtBot,
    event_log: SqliteEventLog,
    paths: Paths,
    qapp: QApplication,
) -> None:
    from datetime import date

    from PySide6.QtWidgets import QStyleOptionViewItem

    from koroku_desktop.ui.viewer.history_view import day_heading, starts_day
    from tests.ui.screenshots import save_variants

    assert day_heading(date(2026, 11, 30), date(2026, 11, 30)) == "Today"
    assert day_heading(date(2026, 11, 29), date(2026, 11, 30)) == "Yesterday"
    assert day_heading(date(2026, 11, 2), date(2026, 11, 30)) == "Monday 2 November 2026"
    dialog = _open(qtbot, event_log, paths)
    model = dialog.timeline.model
    heads = [r for r in range(model.rowCount()) if starts_day(model, r)]
    old = model.row_of_seq(2)
    assert heads == [0, old], "one heading for today, one for ten days ago"
    view = dialog.timeline.table
    delegate = view.itemDelegate()
    option = QStyleOptionViewItem()
    tall, plain = (delegate.sizeHint(option, model.index(r, 0)).height() for r in (0, 1))
    assert tall > plain
    # One click away from the raw event.
    dialog.timeline.select_row(model.row_of_seq(10))
    dialog.timeline.detail.raw_button.click()
    assert '"command": "ls ~"' in dialog.timeline.detail.raw.toPlainText()
    dialog.timeline.detail.raw_button.click()
    save_variants(qapp, dialog, "history", wide=1040)


def test_a_replaced_turn_is_shown_and_marked(
    qloop: qasync.QEventLoop, qtbot: QtBot, paths: Paths, qapp: QApplication
) -> None:
    from koroku_desktop.domain.events import SupersededEvent
    from tests.ui.screenshots import save_variants

    log = SqliteEventLog(paths.db)
    try:
        log.append("default", [_msg("user", "name a colour"), _msg("model", "red")], turn_id="t1")
        log.append("default", [SupersededEvent(superseded_turn_id="t1")], turn_id="t2")
        log.append("default", [_msg("user", "name a colour"), _msg("model", "blue")], turn_id="t2")
        log.append(
            "default", [SupersededEvent(superseded_turn_id="t2", reason="edit")], turn_id="t3"
        )
        log.append("default", [_msg("user", "name a sea"), _msg("model", "Baltic")], turn_id="t3")
        dialog = _open(qtbot, log, paths)
        context = dict(zip((int(s) for s in _column(dialog, 0)), _column(dialog, 4), strict=True))
        assert context == {
            1: "replaced (regenerated)",
            2: "replaced (regenerated)",
            3: "live",  # the superseded marker itself
            4: "replaced (edited)",
            5: "replaced (edited)",
            6: "live",
            7: "live",
            8: "live",
        }
        summaries = _column(dialog, 5)
        assert any("regenerated" in s for s in summaries)
        assert any("edited and sent again" in s for s in summaries)
        save_variants(qapp, dialog, "history-replaced-turns", wide=1040)
    finally:
        log.close()


def test_a_synced_log_shows_what_each_summary_folded_in_by_id(
    qapp: QApplication,
    qloop: qasync.QEventLoop,
    qtbot: QtBot,
    paths: Paths,
    tmp_path: Path,
) -> None:
    """This device (B) and another (A) share a hub; A compacted while B added a turn. B's
    viewer names what A's summary folded in by id, in B's own seqs, and shows B's turn live."""
    from tests.agent.list_hub import ListHub

    hub = ListHub()
    with SqliteEventLog(tmp_path / "a.db", writer="app@laptop") as a:
        b = SqliteEventLog(paths.db, writer="app@desktop")
        try:
            b.append("elsewhere", [_msg("user", "B's own past, elsewhere")] * 3)  # other seqs
            asked = [
                a.append("default", [_msg("user", f"question {n}"), _msg("model", f"answer {n}")])
                for n in range(3)
            ]
            hub.both_ways(a, b)
            b.append("default", [_msg("user", "added on B"), _msg("model", "noted on B")])
            covered = [e for turn in asked[:2] for e in turn]
            a.append(
                "default",
                [
                    CompactionEvent(
                        summary="Questions 0 and 1, summarised on A.",
                        covers_up_to_seq=covered[-1].seq,
                        kept_from_seq=asked[2][0].seq,
                        covered_ids=[e.event_id for e in covered],
                    )
                ],
            )
            hub.both_ways(a, b)
            theme.apply(qapp, "light")
            dialog = _open(qtbot, b, paths)
            texts = dict(zip(_column(dialog, 5), _column(dialog, 4), strict=True))
            (compaction_seq,) = [
                int(s)
                for s, k in zip(_column(dialog, 0), _column(dialog, 2), strict=True)
                if k == "compaction"
            ]
            assert texts["question 0"] == texts["answer 1"] == f"summarised in #{compaction_seq}"
            assert texts["question 2"] == texts["added on B"] == "live"
            dialog.show_tab("Compactions")
            panel = dialog.compactions
            qtbot.waitUntil(lambda: panel.list.topLevelItemCount() == 1)
            item = panel.list.topLevelItem(0)
            assert item is not None
            on_b = [s.seq for s in b.entries("default", kinds=("message",))][:4]
            assert on_b != [e.seq for e in covered]  # B numbers them its own way
            assert item.text(2) == f"4 messages, #{on_b[0]} – #{on_b[-1]}"
            assert "folded in 4 messages" in panel.summary.toPlainText()
            assert not panel.replaced_table.isColumnHidden(4)
            qtbot.waitUntil(lambda: panel.replaced.rowCount() == 4)
            settle()
            save_screenshot(dialog, "viewer-compactions-synced")
        finally:
            b.close()


def test_the_context_column_says_a_refused_message_is_set_aside(
    event_log: SqliteEventLog,
) -> None:
    """The viewer reads the one liveness rule's facts: a message the model refused shows
    `set aside`, the ones around it stay `live`, and a clear takes everything before it."""
    from koroku_desktop.domain.events import RejectedEvent
    from koroku_desktop.ui.viewer.timeline_model import context_status, read_liveness

    ok, big, after = event_log.append(
        "default", [_msg("user", "hi"), _msg("user", "x" * 50), _msg("user", "later")]
    )
    event_log.append(
        "default", [RejectedEvent(rejected_seq=big.seq, rejected_id=big.event_id, reason="big")]
    )
    rule = read_liveness(event_log, "default")
    assert [context_status(e, rule) for e in (ok, big, after)] == ["live", "set aside", "live"]
    (clear,) = event_log.append("default", [ClearedEvent()])
    rule = read_liveness(event_log, "default")
    assert context_status(ok, rule) == f"cleared at #{clear.seq}"


def test_the_memory_files_title_wraps_so_the_viewer_fits_a_narrow_screen(
    qloop: qasync.QEventLoop, qtbot: QtBot, event_log: SqliteEventLog, tmp_path: Path
) -> None:
    """The title over the daily notes (the folder, or the open file's path) was one line: a
    long path held the viewer at 700 px and more once the Memory tab was shown."""
    folder = tmp_path / "home-of-someone" / ".local" / "share" / "koroku-assistant" / "memory"
    dialog = HistoryDialog(event_log, export_writer(event_log, "default"), folder, "default")
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.show_tab("Memory")
    panel = dialog.memory
    assert str(folder) in panel.title.text()
    QApplication.processEvents()
    assert dialog.minimumSizeHint().width() <= 400, dialog.minimumSizeHint()
    folder.mkdir(parents=True)
    (folder / "03-02-2025.md").write_text("[10:00]: We chose SQLite.\n\n", encoding="utf-8")
    panel.refresh()
    assert panel.title.text() == str(folder / "03-02-2025.md")
    QApplication.processEvents()
    assert dialog.minimumSizeHint().width() <= 400, dialog.minimumSizeHint()


def test_the_compactions_list_fills_its_width(
    qloop: qasync.QEventLoop,
    qtbot: QtBot,
    qapp: QApplication,
    event_log: SqliteEventLog,
    paths: Paths,
) -> None:
    """The replaced range and the token counts share the width of the list of compactions
    (every column fitted to its text left a wide empty area at 1600 px, and the list scrolled
    sideways at 400 px); a cut text is whole in its tooltip."""
    theme.apply(qapp, "light")
    dialog = _open(qtbot, event_log, paths)
    dialog.show_tab("Compactions")
    panel = dialog.compactions
    qtbot.waitUntil(lambda: panel.list.topLevelItemCount() == 1)
    header = panel.list.header()
    for width in (1600, 900, 400):
        dialog.resize(width, 700)
        settle()
        save_screenshot(dialog, f"viewer-compactions-{width}")
        shown = panel.list.viewport().width()
        used = sum(header.sectionSize(c) for c in range(header.count()))
        assert used >= shown - 1, f"at {width} px the columns fill {used} of {shown} px"
        bar = panel.list.horizontalScrollBar()
        assert not bar.isVisible(), f"at {width} px the list scrolls sideways ({bar.maximum()})"
        item = panel.list.topLevelItem(0)
        assert item is not None
        last = header.count() - 1
        text_end = header.sectionPosition(last) + panel.list.fontMetrics().horizontalAdvance(
            item.text(last)
        )
        assert shown - text_end < shown / 2, f"at {width} px the right of the list is empty"
        assert [item.toolTip(c) for c in (2, 3)] == [item.text(c) for c in (2, 3)]
    # The events it replaced: their content takes the room, not who said them.
    dialog.resize(1600, 700)
    panel.list.setCurrentItem(panel.list.topLevelItem(0))
    qtbot.waitUntil(lambda: panel.replaced.rowCount() > 0)
    settle()
    table = panel.replaced_table.horizontalHeader()
    content, who = COLUMNS.index("Content"), COLUMNS.index("Who")
    assert table.sectionSize(content) > 2 * table.sectionSize(who)
    assert panel.replaced_table.isColumnHidden(COLUMNS.index("Context"))
