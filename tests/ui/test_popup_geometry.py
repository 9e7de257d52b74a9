"""The quick-ask popup stays wholly on screen near every edge and when it grows; square
corners where nothing composites; focus loss hides it unless pinned."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, QRect, QSize
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication, QWidget
from pytestqt.qtbot import QtBot

from koroku_desktop.ui.app import Desktop
from koroku_desktop.ui.quick_ask.placement import fit_inside, place_near
from tests.fakes.gemini_server import FakeGemini
from tests.support.waits import settle
from tests.ui.helpers import shown_popup
from tests.ui.screenshots import save_screenshot

AREA = QRect(0, 0, 1000, 800)
SIZE = QSize(400, 300)


@pytest.mark.parametrize(
    "cursor",
    [
        QPoint(0, 0),
        QPoint(999, 0),
        QPoint(0, 799),
        QPoint(999, 799),
        QPoint(500, 0),
        QPoint(500, 799),
        QPoint(0, 400),
        QPoint(999, 400),
        QPoint(-50, 900),
    ],
)
def test_placed_inside_near_every_edge_and_corner(cursor: QPoint) -> None:
    assert AREA.contains(QRect(place_near(cursor, SIZE, AREA), SIZE))


def test_placed_inside_a_second_screen_offset_from_the_origin() -> None:
    area = QRect(1920, 200, 1280, 1024)
    for cursor in (QPoint(3199, 1223), QPoint(1920, 200)):
        assert area.contains(QRect(place_near(cursor, SIZE, area), SIZE))


def test_fit_inside_moves_and_shrinks() -> None:
    assert fit_inside(QRect(800, 700, 400, 300), AREA) == QRect(600, 500, 400, 300)
    assert fit_inside(QRect(-20, -20, 400, 300), AREA) == QRect(0, 0, 400, 300)
    assert fit_inside(QRect(0, 600, 400, 1200), AREA) == QRect(0, 0, 400, 800)


def test_the_popup_grown_by_an_approval_stays_on_screen(
    desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot, qapp: QApplication
) -> None:
    popup = desktop.popup
    assert not popup.rounded, "offscreen nothing composites: square corners"
    root = popup.findChild(QWidget, "PopupRoot")
    assert root is not None and root.property("square") is True
    screen = QGuiApplication.primaryScreen().availableGeometry()
    desktop.show_quick_ask()
    qtbot.waitExposed(popup)
    popup.resize(520, 300)
    popup.move(screen.right() + 1 - popup.width(), screen.bottom() + 1 - popup.height())
    qtbot.waitUntil(lambda: screen.contains(popup.geometry()))
    fake_gemini.reply_calls(("bash", {"command": "rm -rf build && sudo make install\n" * 3}))
    fake_gemini.reply_text("ok")
    popup.ask("clean and install")
    qtbot.waitUntil(lambda: bool(popup.approvals.cards()), timeout=10000)
    qtbot.waitUntil(lambda: popup.height() > 300)
    qtbot.waitUntil(lambda: screen.contains(popup.geometry()))
    card = popup.approvals.cards()[0]
    for button in (card.deny, popup.open_button):
        corner = button.mapTo(popup, button.rect().bottomRight()) + popup.pos()
        assert screen.contains(corner), "Deny and Open in chat stay reachable"
    save_screenshot(popup, "popup-approval-at-the-edge")
    card.deny.click()


def test_focus_loss_hides_unless_pinned(desktop: Desktop, qtbot: QtBot) -> None:
    popup = shown_popup(desktop, qtbot)
    qtbot.waitUntil(popup.isActiveWindow)
    desktop.window.activateWindow()
    qtbot.waitUntil(lambda: not popup.isVisible())
    popup.pin_button.setChecked(True)
    desktop.show_quick_ask()
    qtbot.waitUntil(popup.isActiveWindow)
    desktop.window.activateWindow()
    qtbot.waitUntil(desktop.window.isActiveWindow)
    qtbot.waitUntil(lambda: not popup.isActiveWindow())  # the popup was told it lost focus
    settle()  # ... and has decided (a zero-delay timer) whether to hide
    assert popup.isVisible()
