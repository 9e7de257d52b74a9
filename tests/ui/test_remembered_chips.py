"""The "Remembered" chips in the chat: a click opens the passage; Dismiss records it in the
log and greys the chip; "Show in history" opens the viewer selected on that event."""

from __future__ import annotations

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QPainter, QPixmap
from PySide6.QtTest import QTest
from pytestqt.qtbot import QtBot

from koroku_desktop.agent.dismissal import dismiss_remembered
from koroku_desktop.agent.memories import dismissed_passages
from koroku_desktop.domain.events import RememberedDismissedEvent, StoredEvent
from koroku_desktop.ui.app import Desktop
from koroku_desktop.ui.chat.items import ChatItem
from koroku_desktop.ui.chat.remembered_card import RememberedCard
from koroku_desktop.ui.chat.remembered_painter import parse_chip_action
from koroku_desktop.ui.widgets import theme
from tests.fakes.gemini_server import FakeGemini
from tests.ui.conftest import run, said_and_embedded
from tests.ui.helpers import type_and_send
from tests.ui.screenshots import SHOTS, save_screenshot


def _surface(desktop: Desktop, qtbot: QtBot) -> tuple[int, int, int]:
    """Say something, then ask about it so it is remembered; (row, passage seq, message seq)."""
    car = said_and_embedded(desktop, qtbot, "my car is crimson")
    type_and_send(qtbot, desktop.window.input, "what colour is my automobile?")
    qtbot.waitUntil(lambda: not desktop.bridge.busy, timeout=15000)
    items = desktop.window.model.items()
    row = next(n for n, i in enumerate(items) if i.kind == "remembered")
    surfaced = items[row].seq
    assert surfaced is not None
    return row, car, surfaced


def _click_chip(desktop: Desktop, qtbot: QtBot, row: int, passage: int) -> RememberedCard:
    view = desktop.window.view
    view.scroll_to_row(row)
    qtbot.waitUntil(lambda: row in view.delegate._hits)
    hits = view.delegate._hits[row]
    rect = next(r for r, a in hits if (parse_chip_action(a) or (0, 0))[1] == passage)
    QTest.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    cards = desktop.window.findChildren(RememberedCard)
    qtbot.waitUntil(lambda: any(c.isVisible() for c in desktop.window.findChildren(RememberedCard)))
    cards = [c for c in desktop.window.findChildren(RememberedCard) if c.isVisible()]
    assert len(cards) == 1
    return cards[0]


def test_a_chip_opens_its_passage_and_dismiss_records_it(
    desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot
) -> None:
    desktop.window.show()
    row, car, surfaced = _surface(desktop, qtbot)
    card = _click_chip(desktop, qtbot, row, car)
    assert card.text.text() == "my car is crimson"
    assert card.dismiss_button.isEnabled() and card.dismiss_button.text() == "Dismiss"

    card.dismiss_button.click()
    chips: ChatItem = desktop.window.model.item(row)
    qtbot.waitUntil(lambda: car in chips.args["dismissed"], timeout=15000)
    assert dismissed_passages(desktop.runtime.log, desktop.runtime.agent.conversation_id) == {car}
    last = desktop.runtime.log.entries(newest_first=True, limit=1)[0]
    assert isinstance(last, StoredEvent) and isinstance(last.event, RememberedDismissedEvent)
    assert (last.event.passage_seq, last.event.surfaced_seq) == (car, surfaced)
    # The chip stays (what was sent is unchanged), greyed; opened again it cannot be dismissed.
    assert [i.kind for i in desktop.window.model.items()].count("remembered") == 1
    again = _click_chip(desktop, qtbot, row, car)
    assert not again.dismiss_button.isEnabled() and again.dismiss_button.text() == "Dismissed"
    again.close()

    # A reload (a restart of the window's history) shows it dismissed too.
    desktop.window.set_history(desktop.runtime.log.entries(limit=1000))
    reloaded = next(i for i in desktop.window.model.items() if i.kind == "remembered")
    assert reloaded.args["dismissed"] == {car}


def test_show_in_history_jumps_the_viewer_to_the_passage(
    desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot
) -> None:
    desktop.window.show()
    row, car, _surfaced = _surface(desktop, qtbot)
    card = _click_chip(desktop, qtbot, row, car)
    card.history_button.click()
    dialog = desktop.history
    assert dialog is not None and dialog.isVisible()
    timeline = dialog.timeline

    def selected() -> int | None:
        rows = timeline.table.selectionModel().selectedRows()
        entry = timeline.model.entry_at(rows[0].row()) if rows else None
        return None if entry is None else entry.seq

    qtbot.waitUntil(lambda: selected() == car, timeout=15000)
    assert f"#{car}" in timeline.jump_label.text()


def test_screenshots_of_an_open_chip(
    desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot
) -> None:
    window = desktop.window
    window.resize(760, 420)
    window.show()
    if desktop.welcome is not None:
        desktop.welcome.close()
    row, car, _surfaced = _surface(desktop, qtbot)
    SHOTS.mkdir(exist_ok=True)  # the pictures in resources/screenshots/ are copied from here
    for mode in ("light", "dark"):
        theme.apply(desktop.app, mode)
        desktop.app.processEvents()
        card = _click_chip(desktop, qtbot, row, car)
        hits = window.view.delegate._hits[row]
        chip = next(r for r, a in hits if a.startswith("remembered:"))
        at = window.view.viewport().mapTo(window, chip.bottomLeft() + QPoint(0, 4))
        card.move(window.mapToGlobal(at))
        desktop.app.processEvents()
        save_screenshot(card, f"remembered-card-{mode}")
        shot = QPixmap(window.grab())
        painter = QPainter(shot)
        painter.drawPixmap(at, card.grab())
        painter.end()
        assert shot.save(str(SHOTS / f"remembered-chip-open-{mode}.png"))
        card.close()
    card = _click_chip(desktop, qtbot, row, car)
    card.dismiss_button.click()
    chips: ChatItem = window.model.item(row)
    qtbot.waitUntil(lambda: car in chips.args["dismissed"], timeout=15000)
    for mode in ("light", "dark"):
        theme.apply(desktop.app, mode)
        window.view.viewport().update()
        desktop.app.processEvents()
        assert window.grab().save(str(SHOTS / f"remembered-chip-dismissed-{mode}.png"))
    theme.apply(desktop.app, "light")


def test_an_older_page_shows_chips_dismissed_in_the_newer_one(
    desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot
) -> None:
    _row, car, surfaced = _surface(desktop, qtbot)
    run(qtbot, dismiss_remembered(desktop.runtime.agent, car, surfaced))
    entries = desktop.runtime.log.entries(limit=1000)
    split = next(n for n, e in enumerate(entries) if e.seq > surfaced)
    model = desktop.window.model
    model.set_entries(entries[split:])  # the newer page holds the dismissal only
    assert all(i.kind != "remembered" for i in model.items())
    model.prepend_entries(entries[:split])  # the older page brings the chip
    chips = next(i for i in model.items() if i.kind == "remembered")
    assert chips.args["dismissed"] == {car}
