"""Where the keyboard is when approval cards arrive: a card never takes it from another
card, nor from the command being edited; every part of a card is reachable by Tab, and a
screen reader can tell what the focused card asks."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QApplication, QPlainTextEdit, QPushButton, QVBoxLayout, QWidget
from pytestqt.qtbot import QtBot

from koroku_desktop.agent.ports import ApprovalRequest
from koroku_desktop.ui.approvals import PendingApproval
from koroku_desktop.ui.widgets.approval_card import ApprovalCard
from koroku_desktop.ui.widgets.approval_stack import ApprovalStack


class _Bridge(QObject):
    """The two signals and the list an ApprovalStack reads of its bridge."""

    approval_requested = Signal(object)
    approval_closed = Signal(object)

    def __init__(self) -> None:
        super().__init__()
        self.pending_approvals: list[PendingApproval] = []
        self.answers: list[Any] = []

    def answer_approval(self, pending: PendingApproval, decision: Any) -> None:
        self.answers.append((pending, decision))


def _pending(command: str) -> PendingApproval:
    return PendingApproval(ApprovalRequest(command, "bash", {"command": command}), None)  # type: ignore[arg-type]


def _window(qtbot: QtBot, tmp_path: Path) -> tuple[QWidget, ApprovalStack, QPlainTextEdit, _Bridge]:
    bridge = _Bridge()
    window = QWidget()
    layout = QVBoxLayout(window)
    stack = ApprovalStack(bridge, tmp_path)  # type: ignore[arg-type]
    box = QPlainTextEdit()
    layout.addWidget(stack)
    layout.addWidget(box)
    header = QPushButton("History")  # where the keyboard is when the cards arrive
    layout.insertWidget(0, header)
    stack.focus_after = box
    qtbot.addWidget(window)
    window.resize(700, 600)
    window.show()
    qtbot.waitExposed(window)
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    header.setFocus()
    window._bridge = bridge  # type: ignore[attr-defined]  # kept alive with the window
    return window, stack, box, bridge


def _focused_card(
    qtbot: QtBot, stack: ApprovalStack, bridge: _Bridge, pending: PendingApproval
) -> ApprovalCard:
    """Ask `pending` of a stack with no card yet: its card, once it has the keyboard."""
    bridge.approval_requested.emit(pending)
    card = stack.cards()[0]
    qtbot.waitUntil(lambda: QApplication.focusWidget() is card)
    return card


def _keys_stay_on_the_first_card(
    qtbot: QtBot, stack: ApprovalStack, bridge: _Bridge, arrive: Callable[[], None], why: str
) -> None:
    """A first card has the keyboard when `arrive` brings another: the keyboard stays, and
    Ctrl+Enter answers the first card only."""
    first = _pending("echo first")
    card = _focused_card(qtbot, stack, bridge, first)
    arrive()
    QApplication.processEvents()
    assert QApplication.focusWidget() is card, why
    qtbot.keyClick(card, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert [p for p, _ in bridge.answers] == [first]


def test_a_second_card_leaves_the_keyboard_on_the_first(qtbot: QtBot, tmp_path: Path) -> None:
    """Two calls asked at once (or one while the first is read): Ctrl+Enter must answer the
    card being read, never allow a command the user has not seen."""
    _win, stack, _box, bridge = _window(qtbot, tmp_path)
    _keys_stay_on_the_first_card(
        qtbot,
        stack,
        bridge,
        lambda: bridge.approval_requested.emit(_pending("rm -rf build")),
        "the new card took the keyboard",
    )


def test_a_card_arriving_while_the_command_is_edited_leaves_the_keys_there(
    qtbot: QtBot, tmp_path: Path
) -> None:
    _win, stack, _box, bridge = _window(qtbot, tmp_path)
    bridge.approval_requested.emit(_pending("echo first"))
    card = stack.cards()[0]
    assert card.command_edit is not None
    card.command_edit.setFocus()
    card.command_edit.moveCursor(QTextCursor.MoveOperation.End)
    qtbot.keyClicks(card.command_edit, " one")
    bridge.approval_requested.emit(_pending("echo second"))
    QApplication.processEvents()
    qtbot.keyClicks(QApplication.focusWidget(), " two")
    assert card.command_edit.toPlainText() == "echo first one two"
    second = stack.cards()[1]
    assert second.command_edit is not None and second.command_edit.toPlainText() == "echo second"


def test_tab_reaches_the_command_and_every_button(qtbot: QtBot, tmp_path: Path) -> None:
    _win, stack, _box, bridge = _window(qtbot, tmp_path)
    card = _focused_card(qtbot, stack, bridge, _pending("echo hi"))
    reached = []
    for _ in range(5):
        qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
        reached.append(QApplication.focusWidget())
    wanted = [card.command_edit, card.allow_once, card.allow_session, card.allow_always, card.deny]
    assert reached == wanted


def test_a_screen_reader_hears_what_the_focused_card_asks(qtbot: QtBot, tmp_path: Path) -> None:
    _win, stack, _box, bridge = _window(qtbot, tmp_path)
    bridge.approval_requested.emit(_pending("echo hi"))
    card = stack.cards()[0]
    assert card.accessibleName() == "Koroku wants to run a shell command"
    assert "Ctrl+Enter" in card.accessibleDescription()
    assert "Esc" in card.accessibleDescription()


def test_two_stacks_in_one_window_leave_each_other_the_focused_card(
    qtbot: QtBot, tmp_path: Path
) -> None:
    """The popup shows the chat's cards and quick ask's own, each in its stack: a card in one
    must not take the keyboard from a card of the other, and Ctrl+Enter answers the card
    that has the keyboard, whichever stack began watching the keys last."""
    window, stack, _box, bridge = _window(qtbot, tmp_path)
    other_bridge = _Bridge()
    other = ApprovalStack(other_bridge, tmp_path)  # type: ignore[arg-type]
    layout = window.layout()
    assert isinstance(layout, QVBoxLayout)
    layout.insertWidget(2, other)
    _keys_stay_on_the_first_card(
        qtbot,
        stack,
        bridge,
        lambda: other_bridge.approval_requested.emit(_pending("echo theirs")),
        "the other stack's card took the keyboard",
    )
    assert other_bridge.answers == []
