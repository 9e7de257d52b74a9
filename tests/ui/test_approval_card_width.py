"""The approval card follows its window's width: it never holds a window wide, its buttons
wrap to a second row when one does not fit, and its height follows the wrapping."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QLabel, QPushButton, QVBoxLayout, QWidget
from pytestqt.qtbot import QtBot

from koroku_desktop.agent.ports import ApprovalRequest
from koroku_desktop.ui.app import Desktop
from koroku_desktop.ui.widgets.approval_card import ApprovalCard
from tests.fakes.gemini_server import FakeGemini
from tests.ui.helpers import shown_popup
from tests.ui.realwin.checks import clipped_texts

COMMAND = "dd if=/dev/zero bs=1M count=10 \\\n  of=/dev/sdb"
MCP_SOURCE = (
    "MCP server 'rich', tool 'wipe' — marked destructive: may delete or overwrite data, "
    "marked open-world: reaches outside this computer"
)
REQUESTS = {
    "bash": ApprovalRequest("c1", "bash", {"command": COMMAND, "working_dir": "a/b/c/d/e/f"}),
    "mcp": ApprovalRequest(
        "c2", "rich_wipe", {"everything": True, "path": "/srv/x" * 20}, MCP_SOURCE
    ),
    "schedule": ApprovalRequest(
        "c3", "schedule", {"title": "Morning summary of the news", "prompt": "Summarise " * 30}
    ),
}


def _host(qtbot: QtBot, width: int) -> tuple[QWidget, QVBoxLayout]:
    """A window with no minimum size of its own (as the quick-ask popup): its layout's
    minimum is the only thing that can hold it wide."""
    host = QWidget()
    layout = QVBoxLayout(host)
    layout.setContentsMargins(20, 6, 20, 14)
    layout.addWidget(QLabel("the chat"), 1)
    qtbot.addWidget(host)
    host.resize(width, 700)
    host.show()
    qtbot.waitExposed(host)
    return host, layout


def _shown_card(
    qtbot: QtBot, tmp_path: Path, width: int, direction: Qt.LayoutDirection | None = None
) -> tuple[QWidget, ApprovalCard, list[QPushButton]]:
    """A bash card (four answers) shown in a `_host` `width` px wide, laid out; its buttons."""
    host, layout = _host(qtbot, width)
    if direction is not None:
        host.setLayoutDirection(direction)
    card = ApprovalCard(ApprovalRequest("c1", "bash", {"command": COMMAND}), tmp_path)
    layout.addWidget(card)
    qtbot.waitUntil(card.isVisible)
    _settle()
    return host, card, _buttons(card)


def _buttons(card: ApprovalCard) -> list[QPushButton]:
    return [card.allow_once, card.allow_session, card.allow_always, card.deny]


def _rows(buttons: list[QPushButton]) -> int:
    return len({b.y() for b in buttons})


def _settle() -> None:
    for _ in range(5):
        QApplication.processEvents()


def test_a_card_shown_wide_lets_the_window_narrow_to_420(
    qtbot: QtBot, qapp: QApplication, tmp_path: Path
) -> None:
    host, card, buttons = _shown_card(qtbot, tmp_path, 900)
    assert _rows(buttons) == 1
    assert card.deny.x() - card.allow_always.geometry().right() > 20, "Deny apart at the right"
    host.resize(420, 700)
    _settle()
    assert host.width() == 420, "the card's one row of buttons held the window wide"
    assert _rows(buttons) == 2, "two rows where two fit, not one button a row"
    assert clipped_texts(host) == []
    assert card.height() >= card.heightForWidth(card.width())
    assert card.geometry().bottom() <= host.height(), "the card's bottom is in the window"
    host.resize(900, 700)
    qtbot.waitUntil(lambda: _rows(buttons) == 1)
    assert clipped_texts(host) == []


@pytest.mark.parametrize("kind", list(REQUESTS))
def test_a_card_arriving_in_a_narrow_window_keeps_it_narrow(
    qtbot: QtBot, qapp: QApplication, tmp_path: Path, kind: str
) -> None:
    host, layout = _host(qtbot, 400)
    card = ApprovalCard(REQUESTS[kind], tmp_path)
    layout.addWidget(card)
    qtbot.waitUntil(card.isVisible)
    _settle()
    assert host.width() == 400
    assert clipped_texts(host) == []
    assert card.height() >= card.heightForWidth(card.width())


def test_the_quick_ask_popup_narrows_with_a_card_waiting(
    desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot
) -> None:
    """The popup has no minimum of its own: a card laid out in one row must not hold it."""
    popup = shown_popup(desktop, qtbot)
    popup.resize(800, 500)
    narrowest = max(420, popup.minimumSizeHint().width())  # what the popup allows on its own
    fake_gemini.reply_calls(("bash", {"command": COMMAND}))
    fake_gemini.reply_text("ok")
    popup.ask("wipe the stick")
    qtbot.waitUntil(lambda: bool(popup.approvals.cards()), timeout=10000)
    card = popup.approvals.cards()[0]
    buttons = _buttons(card)
    qtbot.waitUntil(lambda: card.isVisible() and _rows(buttons) == 1)
    popup.resize(narrowest, popup.height())
    _settle()
    assert popup.width() == narrowest, "the card's one row of buttons held the popup wide"
    qtbot.waitUntil(lambda: _rows(buttons) == 2)
    _settle()
    assert clipped_texts(card) == []
    card.deny.click()


def test_the_buttons_mirror_right_to_left(qtbot: QtBot, qapp: QApplication, tmp_path: Path) -> None:
    """In a right-to-left window (every other layout mirrors) Allow once leads at the right
    and Deny stands apart at the left, in one row and wrapped."""
    host, card, buttons = _shown_card(qtbot, tmp_path, 900, Qt.LayoutDirection.RightToLeft)
    assert _rows(buttons) == 1
    xs = [b.x() for b in buttons]
    assert xs == sorted(xs, reverse=True), "the row reads from the right"
    assert card.allow_always.x() - card.deny.geometry().right() > 20, "Deny apart at the left"
    inside = card.contentsRect()
    assert card.deny.x() >= inside.left() and card.allow_once.geometry().right() <= inside.right()
    host.resize(420, 700)
    _settle()
    assert _rows(buttons) == 2
    assert card.allow_once.x() > card.allow_session.x(), "each wrapped row reads from the right"
    assert clipped_texts(host) == []
