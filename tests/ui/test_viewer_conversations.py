"""The viewer across conversations, on a real event log file with real widgets offscreen:
the conversation filter (deleted ones found and restored), each event's conversation in the
timeline, the detail and search hits, Export… of the conversation shown, and Import… of
Koroku, ChatGPT and Claude exports (a damaged file, a cancel) through the code `koroku
import` uses. Only the static file dialog is stubbed."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import qasync
from PySide6.QtWidgets import QApplication, QFileDialog
from pytestqt.qtbot import QtBot

from koroku_desktop.agent.conversations import ConversationBook
from koroku_desktop.app.config import Paths, default_paths
from koroku_desktop.app.exports import export_file, export_writer
from koroku_desktop.app.imports import ImportOutcome, Progress, import_file, importer_for
from koroku_desktop.domain.events import ConversationEvent, MessageEvent, StoredEvent
from koroku_desktop.store import SqliteEventLog
from koroku_desktop.ui.app import Desktop
from koroku_desktop.ui.viewer.dialog import HistoryDialog
from koroku_desktop.ui.viewer.export import CHOICES
from koroku_desktop.ui.viewer.history_view import shows_conversation
from koroku_desktop.ui.viewer.timeline_model import CONVERSATION_COLUMN
from koroku_desktop.ui.widgets import theme
from tests.fakes.chat_model import FakeChatModel
from tests.fakes.gemini_server import FakeGemini
from tests.imports.samples import chatgpt_simple
from tests.support.builders import model, user
from tests.support.processes import Koroku
from tests.support.waits import wait_until
from tests.ui.conftest import run, running_desktop
from tests.ui.screenshots import save_screenshot


@pytest.fixture
def paths() -> Paths:
    return default_paths()


@pytest.fixture
def three(paths: Paths) -> Iterator[tuple[SqliteEventLog, dict[str, str]]]:
    """The log's first conversation, "Taxes 2026", and "Garden" (deleted)."""
    paths.home.mkdir(parents=True, exist_ok=True)
    log = SqliteEventLog(paths.db)
    book = ConversationBook(log)
    log.append("default", [user("hello from the first days"), model("hello")])
    taxes = book.create("Taxes 2026")
    log.append(taxes.id, [user("the home office deduction"), model("keep the receipts")])
    garden = book.create("Garden")
    log.append(garden.id, [user("when to plant tulips"), model("in autumn, before frost")])
    book.delete(garden.id)
    try:
        yield log, {"default": "default", "taxes": taxes.id, "garden": garden.id}
    finally:
        log.close()


def _open(qtbot: QtBot, log: SqliteEventLog, paths: Paths, **kwargs: object) -> HistoryDialog:
    dialog = HistoryDialog(
        log,
        export_writer(log, "default"),
        paths.memory,
        "default",
        importer=importer_for(paths),
        **kwargs,  # type: ignore[arg-type]
    )
    qtbot.addWidget(dialog)
    dialog.resize(900, 760)
    dialog.show()
    chooser = dialog.timeline.conversation
    qtbot.waitUntil(lambda: chooser.combo.count() > 1 and not dialog.timeline.model.loading)
    return dialog


@dataclass
class Viewer:
    """The viewer open over the three conversations."""

    dialog: HistoryDialog
    log: SqliteEventLog
    ids: dict[str, str]


@pytest.fixture
def viewer(
    qloop: qasync.QEventLoop,
    qtbot: QtBot,
    three: tuple[SqliteEventLog, dict[str, str]],
    paths: Paths,
) -> Viewer:
    log, ids = three
    return Viewer(_open(qtbot, log, paths), log, ids)


def _choose(qtbot: QtBot, dialog: HistoryDialog, conversation_id: str | None) -> None:
    combo = dialog.timeline.conversation.combo
    combo.setCurrentIndex(combo.findData(conversation_id) if conversation_id else 0)
    model = dialog.timeline.model
    qtbot.waitUntil(lambda: model.query.conversation == conversation_id and not model.loading)


def _rows_of(dialog: HistoryDialog) -> set[str]:
    model = dialog.timeline.model
    found = [model.entry_at(r) for r in range(model.rowCount())]
    return {e.conversation_id for e in found if e is not None}


def test_the_filter_lists_every_conversation_and_shows_one_or_all(
    viewer: Viewer,
    qtbot: QtBot,
) -> None:
    dialog, ids = viewer.dialog, viewer.ids
    combo = dialog.timeline.conversation.combo
    names = [combo.itemText(i) for i in range(combo.count())]
    assert names[0] == "All conversations"
    assert "Garden (deleted)" in names and "Taxes 2026" in names and "Conversation" in names
    # All of them: every conversation's events, each row naming its conversation.
    model = dialog.timeline.model
    assert _rows_of(dialog) == set(ids.values()) and shows_conversation(model)
    titles = {model.index(r, CONVERSATION_COLUMN).data() for r in range(model.rowCount())}
    assert titles == {"Conversation", "Taxes 2026", "Garden"}

    _choose(qtbot, dialog, ids["taxes"])
    assert _rows_of(dialog) == {ids["taxes"]} and not shows_conversation(model)
    assert not dialog.timeline.conversation.restore_button.isVisible()
    # A kind filter keeps to the conversation shown...
    dialog.timeline.kind_boxes["conversation"].setChecked(False)
    qtbot.waitUntil(lambda: model.query.kinds is not None and not model.loading)
    assert {model.index(r, 2).data() for r in range(model.rowCount())} == {"message"}
    assert _rows_of(dialog) == {ids["taxes"]}
    # ...and over all of them reads each conversation's index (the same rows a scan finds).
    _choose(qtbot, dialog, None)
    assert model.conversation_ids and _rows_of(dialog) == set(ids.values())
    assert model.rowCount() == 6

    # The detail names the conversation by its title.
    dialog.timeline.select_row(0)
    assert "“Garden”" in dialog.timeline.detail.title.text()


def test_search_hits_say_which_conversation_and_jump_shows_all(
    viewer: Viewer,
    qtbot: QtBot,
) -> None:
    dialog, ids = viewer.dialog, viewer.ids
    _choose(qtbot, dialog, ids["taxes"])
    dialog.show_tab("Search")
    dialog.search.box.setText("tulips")
    hits = run(qtbot, dialog.search.search_now())
    assert [h.conversation_id for h in hits] == [ids["garden"]]
    label = dialog.search.results.itemWidget(dialog.search.results.item(0))
    assert "in “Garden”" in label.text()  # type: ignore[attr-defined]
    # A hit in another conversation than the one shown: the timeline shows all, around it.
    row = run(qtbot, dialog.jump_to(hits[0].seq))
    assert row >= 0 and dialog.timeline.conversation.current() is None


def test_a_deleted_conversation_is_restored_from_the_viewer(
    viewer: Viewer, qtbot: QtBot, paths: Paths
) -> None:
    dialog, ids = viewer.dialog, viewer.ids
    _choose(qtbot, dialog, ids["garden"])
    chooser = dialog.timeline.conversation
    assert chooser.restore_button.isVisible()
    assert _rows_of(dialog) == {ids["garden"]}  # found here while hidden everywhere else
    with qtbot.waitSignal(dialog.conversations_changed, timeout=10000):
        chooser.restore_button.click()
    qtbot.waitUntil(lambda: not chooser.restore_button.isVisible())
    # Through the log: another process's book (the chat's list reads it) sees it back.
    other = SqliteEventLog(paths.db)
    try:
        back = ConversationBook(other).get(ids["garden"])
        assert back is not None and not back.deleted
    finally:
        other.close()
    assert chooser.combo.currentText() == "Garden"
    assert "Restored “Garden”" in dialog.status.text()


def test_refresh_lists_a_conversation_another_process_started_and_restored(
    viewer: Viewer, qtbot: QtBot, koroku: Koroku
) -> None:
    """The filter reads the registry through its book, which keeps what it read: Refresh
    still finds what a real `koroku` process wrote meanwhile (a new conversation, and the
    deleted one restored there)."""
    dialog, ids = viewer.dialog, viewer.ids
    chooser = dialog.timeline.conversation
    for args in (("new", "Recipes"), ("restore", ids["garden"])):
        done = koroku.run("conversations", *args)
        assert done.returncode == 0, done.stderr
    dialog.refresh()
    combo = chooser.combo
    qtbot.waitUntil(lambda: "Recipes" in [combo.itemText(i) for i in range(combo.count())])
    assert combo.itemText(combo.findData(ids["garden"])) == "Garden"


def test_refresh_under_a_kind_filter_shows_a_conversation_started_meanwhile(
    viewer: Viewer, qtbot: QtBot, koroku: Koroku
) -> None:
    """A kind filter over every conversation reads each known one's index: Refresh reads
    the registry before the timeline, so a conversation another process started is in."""
    dialog = viewer.dialog
    model = dialog.timeline.model
    dialog.timeline.kind_boxes["compaction"].setChecked(False)
    qtbot.waitUntil(lambda: model.query.kinds is not None and not model.loading)
    done = koroku.run("conversations", "new", "Recipes", "--json")
    assert done.returncode == 0, done.stderr
    recipes = json.loads(done.stdout)["id"]
    run(qtbot, dialog.timeline.refresh())
    assert recipes in _rows_of(dialog)


def test_a_jump_right_after_refresh_is_kept(viewer: Viewer, qtbot: QtBot) -> None:
    """What the app's "show in history" does with the viewer open: Refresh, then a jump;
    the refreshed filters never replace the jump once the registry is read."""
    dialog = viewer.dialog
    refreshed = dialog.timeline.refresh()
    row = run(qtbot, dialog.jump_to(2))
    run(qtbot, refreshed)
    model = dialog.timeline.model
    assert row >= 0 and model.query.before_seq is not None
    assert model.row_of_seq(2) >= 0 and not dialog.timeline.jump_bar.isHidden()


def test_export_writes_the_conversation_shown_or_all(
    viewer: Viewer,
    qtbot: QtBot,
    tmp_path: Path,
) -> None:
    dialog, ids = viewer.dialog, viewer.ids
    assert CHOICES[1].label(dialog.export_target()) == "All conversations as JSON…"
    _choose(qtbot, dialog, ids["taxes"])
    assert CHOICES[1].label(dialog.export_target()) == "“Taxes 2026” as JSON…"
    one = tmp_path / "taxes.json"
    message = run(qtbot, dialog.exporter.export_to(CHOICES[1], one))
    assert message.startswith("Exported 3 event(s)")
    data = json.loads(one.read_text("utf-8"))
    assert data["scope"] == "conversation"
    assert {e["conversation_id"] for e in data["events"]} == {ids["taxes"]}
    md = tmp_path / "taxes.md"
    run(qtbot, dialog.exporter.export_to(CHOICES[0], md))
    text = md.read_text("utf-8")
    assert "home office" in text and "tulips" not in text
    _choose(qtbot, dialog, None)
    every = tmp_path / "all.json"
    run(qtbot, dialog.exporter.export_to(CHOICES[1], every))
    assert len(json.loads(every.read_text("utf-8"))["events"]) == viewer.log.count()


def _pick(monkeypatch: pytest.MonkeyPatch, path: Path) -> None:
    """The file dialog answers `path` (the static call is the only thing stubbed)."""
    monkeypatch.setattr(
        QFileDialog, "getOpenFileName", staticmethod(lambda *_a, **_k: (str(path), ""))
    )


def test_import_of_a_conversation_export_refreshes_the_viewer_and_is_idempotent(
    viewer: Viewer, qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dialog, log = viewer.dialog, viewer.log
    # Another data dir's conversation, exported alone.
    elsewhere = SqliteEventLog(tmp_path / "elsewhere.db")
    try:
        recipes = ConversationBook(elsewhere).create("Recipes")
        elsewhere.append(recipes.id, [user("a bread with rye"), model("use a sourdough")])
        export = tmp_path / "recipes.json"
        export_file(elsewhere, recipes.id, "json", False, export, one=True)
    finally:
        elsewhere.close()
    importer = dialog.importer
    assert importer is not None
    _pick(monkeypatch, export)
    before = log.count()
    with qtbot.waitSignal(dialog.conversations_changed, timeout=10000):
        dialog.import_button.click()
    assert importer.running is not None
    line = run(qtbot, importer.running)
    assert line == "Imported 3 event(s) of 1 conversation(s) from a Koroku export"
    assert log.count() == before + 3
    combo = dialog.timeline.conversation.combo
    qtbot.waitUntil(lambda: combo.findData(recipes.id) >= 0)
    assert combo.itemText(combo.findData(recipes.id)) == "Recipes"
    assert not importer.progress.isVisible()
    # Again: nothing new.
    dialog.import_button.click()
    assert importer.running is not None
    again = run(qtbot, importer.running)
    assert "imported 0 event(s)" in again.lower() and "3 already here" in again
    assert log.count() == before + 3


def test_a_damaged_export_through_import_says_one_line_and_imports_nothing(
    viewer: Viewer, qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dialog, log = viewer.dialog, viewer.log
    chats = [chatgpt_simple(f"c{n}", f"Chat {n}", [("hi", "hello")]) for n in range(3)]
    text = json.dumps(chats)
    damaged = tmp_path / "conversations.json"
    damaged.write_text(text[: len(text) * 2 // 3], encoding="utf-8")  # cut off mid-chat
    _pick(monkeypatch, damaged)
    before = log.count()
    dialog.import_button.click()
    assert dialog.importer is not None and dialog.importer.running is not None
    line = run(qtbot, dialog.importer.running, timeout=30000)
    assert line.startswith("Import failed:") and "nothing imported" in line
    assert "\n" not in line and dialog.status.text() == line
    assert log.count() == before

    stranger = tmp_path / "notes.json"
    stranger.write_text('{"hello": "world"}', encoding="utf-8")
    _pick(monkeypatch, stranger)
    dialog.import_button.click()
    line = run(qtbot, dialog.importer.running, timeout=30000)
    assert line.startswith("Import failed: notes.json is not a Koroku export")
    assert log.count() == before


def test_cancel_stops_a_chatgpt_import_before_the_next_conversation(
    viewer: Viewer,
    qtbot: QtBot,
    paths: Paths,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    dialog, log = viewer.dialog, viewer.log
    chats = [chatgpt_simple(f"c{n}", f"Chat {n}", [("hi", "hello")]) for n in range(4)]
    exported = tmp_path / "conversations.json"
    exported.write_text(json.dumps(chats), encoding="utf-8")
    started = threading.Event()

    def held(path: Path, progress: Progress, cancelled: Callable[[], bool]) -> ImportOutcome:
        """The real import, started once Cancel was pressed (so the test needs no race)."""
        started.set()
        wait_until(cancelled, 30, message="Cancel never reached the import")
        return import_file(path, paths=paths, progress=progress, cancelled=cancelled)

    assert dialog.importer is not None
    dialog.importer.run = held
    _pick(monkeypatch, exported)
    before = log.count()
    dialog.import_button.click()
    qtbot.waitUntil(started.is_set)
    assert dialog.importer.progress.isVisible()
    dialog.importer.progress.cancel_button.click()
    line = run(qtbot, dialog.importer.running, timeout=30000)
    assert line == "Import stopped: import stopped; nothing was imported"
    assert log.count() == before


def test_cancel_between_chats_leaves_each_one_whole(paths: Paths, tmp_path: Path) -> None:
    """The import the viewer runs, stopped after its first chat: that chat is whole (its
    `imported` marker written), the others absent; running it again brings in the rest."""
    paths.home.mkdir(parents=True, exist_ok=True)
    chats = [chatgpt_simple(f"c{n}", f"Chat {n}", [("hi", f"hello {n}")]) for n in range(3)]
    exported = tmp_path / "conversations.json"
    exported.write_text(json.dumps(chats), encoding="utf-8")
    seen: list[int] = []

    def step(done: int, _total: int, _what: str) -> None:
        seen.append(done)

    from koroku_desktop.app.imports import ImportCancelled

    with pytest.raises(ImportCancelled, match="after 1 of 3"):
        import_file(exported, paths=paths, progress=step, cancelled=lambda: 1 in seen)
    log = SqliteEventLog(paths.db)
    try:
        found = ConversationBook(log).listed()
        assert [c.title for c in found] == ["Chat 0"]
        markers = log.entries(found[0].id, kinds=("conversation",))
        actions = [
            e.event.action
            for e in markers
            if isinstance(e, StoredEvent) and isinstance(e.event, ConversationEvent)
        ]
        assert actions == ["created", "imported"]
        messages = log.entries(found[0].id, kinds=("message",))
        assert [type(getattr(e, "event", None)) for e in messages] == [MessageEvent] * 2
    finally:
        log.close()
    done = import_file(exported, paths=paths)
    assert "2 new conversation(s)" in done.line and "1 already here" in done.line


@pytest.mark.parametrize("mode", ["light", "dark"])
def test_screenshots_of_the_conversation_filter(
    qloop: qasync.QEventLoop,
    qtbot: QtBot,
    qapp: QApplication,
    three: tuple[SqliteEventLog, dict[str, str]],
    paths: Paths,
    mode: str,
) -> None:
    log, ids = three
    theme.apply(qapp, mode)
    try:
        dialog = _open(qtbot, log, paths)
        for width, label in ((900, "wide"), (400, "narrow")):
            dialog.resize(width, 760)
            qtbot.waitUntil(lambda w=width: dialog.width() == w)  # type: ignore[misc]
            _choose(qtbot, dialog, None)
            qapp.processEvents()
            save_screenshot(dialog, f"viewer-conversations-{mode}-{label}")
            assert dialog.timeline.conversation.combo.width() > 100
            _choose(qtbot, dialog, ids["garden"])
            qapp.processEvents()
            save_screenshot(dialog, f"viewer-deleted-{mode}-{label}")
            restore = dialog.timeline.conversation.restore_button
            assert restore.isVisible() and restore.width() >= restore.sizeHint().width()
    finally:
        theme.apply(qapp, "light")


def test_restoring_in_the_app_viewer_lists_the_conversation_in_the_sidebar_again(
    desktop: Desktop, qtbot: QtBot
) -> None:
    """The whole app: a conversation deleted in the sidebar is found in the viewer and,
    restored there, listed in the chat's sidebar again."""
    book = desktop.runtime.conversations
    assert book is not None
    garden = book.create("Garden")
    desktop.runtime.log.append(garden.id, [user("when to plant tulips")])
    desktop.conversations.refresh()
    qtbot.waitUntil(lambda: "Garden" in desktop.window.sidebar.visible_titles())
    desktop.window.sidebar.delete_requested.emit(garden.id)
    qtbot.waitUntil(lambda: "Garden" not in desktop.window.sidebar.visible_titles())

    dialog = desktop.show_history()
    chooser = dialog.timeline.conversation
    qtbot.waitUntil(lambda: chooser.combo.findData(garden.id) >= 0)
    assert chooser.combo.itemText(chooser.combo.findData(garden.id)) == "Garden (deleted)"
    _choose(qtbot, dialog, garden.id)
    chooser.restore_button.click()
    qtbot.waitUntil(lambda: "Garden" in desktop.window.sidebar.visible_titles(), timeout=10000)
    dialog.close()


def test_history_imported_in_the_app_viewer_is_embedded_in_the_background(
    qloop: qasync.QEventLoop,
    qtbot: QtBot,
    fake_gemini: FakeGemini,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 22: imported history is searchable by keywords at once and embedded in the
    background (the app's embedder catches up after the viewer's Import…)."""
    chat = chatgpt_simple("c-rye", "Baking", [("how long to proof rye dough", "overnight")])
    export = tmp_path / "conversations.json"
    export.write_text(json.dumps([chat]), "utf-8")
    with running_desktop(qtbot, FakeChatModel.scripted([], then="ok")) as desk:
        dialog = desk.show_history()
        assert dialog.importer is not None
        _pick(monkeypatch, export)
        dialog.import_button.click()
        assert dialog.importer.running is not None
        line = run(qtbot, dialog.importer.running, timeout=30000)
        assert "ChatGPT" in line, line
        assert desk.runtime.log.search("proof rye")  # keywords: at once

        def embedded() -> bool:
            sent = [json.dumps(r.body) for r in fake_gemini.embed_requests()]
            return any("proof rye dough" in body for body in sent)

        qtbot.waitUntil(embedded, timeout=20000)
