"""The approval card's buttons wrap to the card's width and never hold the window wide."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QApplication, QLabel, QVBoxLayout, QWidget
from pytestqt.qtbot import QtBot

from koroku_desktop.agent.ports import ApprovalRequest
from koroku_desktop.ui.widgets.approval_card import ApprovalCard


def test_a_card_in_one_row_lets_the_window_narrow_again(
    qtbot: QtBot, qapp: QApplication, tmp_path: Path
) -> None:
    host = QWidget()
    layout = QVBoxLayout(host)
    layout.addWidget(QLabel("the chat"))
    qtbot.addWidget(host)
    host.resize(420, 400)
    host.show()
    qtbot.waitExposed(host)
    card = ApprovalCard(ApprovalRequest("c1", "bash", {"command": "ls"}), tmp_path)
    layout.addWidget(card)
    buttons = [card.allow_once, card.allow_session, card.allow_always, card.deny]
    rows = lambda: len({b.y() for b in buttons})  # noqa: E731
    qtbot.waitUntil(lambda: rows() == 2)
    assert host.width() == 420, "a card arriving in a narrow window never widens it"
    for width, wanted in ((900, 1), (420, 2)):
        host.resize(width, 400)
        qtbot.waitUntil(lambda n=wanted: rows() == n)
        assert host.width() == width, "one row of buttons never sets the window's minimum"
        for b in buttons:
            assert b.width() >= b.minimumSizeHint().width(), b.text()
        if wanted == 1:  # Deny kept apart at the right edge
            assert card.deny.x() - card.allow_always.geometry().right() > 100
