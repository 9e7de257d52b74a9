"""The sidebar's list on its own: a refill (a model reset over plain rows) keeps the current
conversation selected, pinned ones first and the activity marks; one asked for from inside
the list's own click, or after the widget is gone, is safe."""

from __future__ import annotations

from dataclasses import replace

import pytest
from PySide6.QtCore import QCoreApplication, QEvent, Qt
from PySide6.QtTest import QTest
from pytestqt.qtbot import QtBot

from koroku_desktop.domain.conversations import Conversation
from koroku_desktop.ui.chat.sidebar import NEEDS_YOU, PIN, RUNNING, WIDTH, ConversationSidebar


def conversations(*titles: str) -> list[Conversation]:
    return [
        Conversation(id=f"c{i}", title=title, created_at=0.0, last_at=0.0, last_seq=i)
        for i, title in enumerate(titles)
    ]


def selected(side: ConversationSidebar) -> list[str]:
    return [str(i.data(Qt.ItemDataRole.UserRole)) for i in side.list.selectedIndexes()]


def test_a_refill_keeps_the_selection_the_pins_and_the_marks(qtbot: QtBot) -> None:
    side = ConversationSidebar()
    qtbot.addWidget(side)
    listed = conversations("zebras", "oceans", "stripes")
    side.show_conversations(listed, "c1", set())
    side.show_activity({"c0"}, {"c2"})
    assert side.visible_titles() == ["zebras" + RUNNING, "oceans", "stripes" + NEEDS_YOU]
    assert selected(side) == ["c1"]

    side.show_conversations(listed, "c1", {"c2"})  # pinned: a refill
    assert side.visible_titles() == [PIN + "stripes" + NEEDS_YOU, "zebras" + RUNNING, "oceans"]
    assert selected(side) == ["c1"]
    assert side.list.model().index(0, 0).data(Qt.ItemDataRole.ToolTipRole) == "stripes"

    side.search.setText("o")  # hides the current one: nothing selected
    assert side.visible_titles() == ["oceans"]
    side.show_conversations(listed, "c0", {"c2"})
    assert selected(side) == []
    side.search.clear()
    assert selected(side) == ["c0"]
    side.show_activity(set(), set())
    assert side.visible_titles() == [PIN + "stripes", "zebras", "oceans"]


def test_a_refill_from_inside_the_lists_own_click_is_safe(qtbot: QtBot) -> None:
    """Choosing a line can list the conversations again before the click is done."""
    side = ConversationSidebar()
    qtbot.addWidget(side)
    side.show()
    qtbot.waitExposed(side)
    side.show_conversations(conversations(*(f"a{i}" for i in range(12))), "c0", set())
    rounds: list[str] = []

    def chosen(cid: str) -> None:
        rounds.append(cid)
        titles = (f"b{len(rounds)}-{i}" for i in range(12))
        side.show_conversations(conversations(*titles), cid, set())

    side.chosen.connect(chosen)
    for k in range(30):
        where = side.list.visualRect(side.lines.index(1 + k % 5)).center()
        QTest.mouseClick(side.list.viewport(), Qt.MouseButton.LeftButton, pos=where)
        QTest.mouseDClick(side.list.viewport(), Qt.MouseButton.LeftButton, pos=where)
    assert len(rounds) >= 30
    assert side.visible_titles()[0].startswith(f"b{len(rounds)}-")
    assert selected(side) == [rounds[-1]]


def test_a_refill_after_the_widget_is_deleted_raises_instead_of_crashing(qtbot: QtBot) -> None:
    side = ConversationSidebar()
    side.show_conversations(conversations("zebras"), "c0", set())
    side.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    with pytest.raises(RuntimeError, match="already deleted"):
        side.show_conversations(conversations("oceans"), "c0", set())


def test_a_refill_from_a_write_elsewhere_keeps_the_list_where_it_was_scrolled(
    qtbot: QtBot,
) -> None:
    """Another process writes in a conversation far down the list: it moves up, but the list
    the person scrolled stays put; a switch (a new current one) scrolls to it."""
    side = ConversationSidebar()
    qtbot.addWidget(side)
    side.resize(WIDTH, 300)
    side.show()
    qtbot.waitExposed(side)
    listed = conversations(*(f"t{i}" for i in range(60)))[::-1]  # c59 most recent
    side.show_conversations(listed, "c59", set())
    bar = side.list.verticalScrollBar()
    bar.setValue(bar.maximum() // 2)
    scrolled = bar.value()
    assert scrolled > 0

    written = replace(listed[40], last_seq=100)  # `koroku ask -c t19` in a terminal
    reordered = [written] + [c for c in listed if c.id != written.id]
    side.show_conversations(reordered, "c59", set())
    assert side.visible_titles()[0] == "t19"
    assert selected(side) == ["c59"]
    assert bar.value() == scrolled

    side.show_conversations(listed, "c0", set())  # a switch to one at the bottom
    assert selected(side) == ["c0"]
    assert bar.value() == bar.maximum()
