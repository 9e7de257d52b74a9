"""A disabled button looks disabled whatever its role: the style sheet's `#Danger` (red text)
and `#Primary` (accent fill) outranked `QPushButton:disabled`, so a disabled Forget or Delete
looked as clickable as an enabled one."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QColor, QImage
from PySide6.QtWidgets import QApplication, QPushButton
from pytestqt.qtbot import QtBot

from koroku_desktop.ui.widgets import theme


def _near(a: QColor, b: QColor) -> bool:
    return abs(a.red() - b.red()) + abs(a.green() - b.green()) + abs(a.blue() - b.blue()) < 60


def _pixels(button: QPushButton) -> list[QColor]:
    image: QImage = button.grab().toImage()
    return [
        image.pixelColor(x, y) for x in range(0, image.width(), 1) for y in range(image.height())
    ]


@pytest.mark.parametrize("mode", ["light", "dark"])
def test_disabled_danger_and_primary_buttons_look_disabled(
    qapp: QApplication, qtbot: QtBot, mode: str
) -> None:
    th = theme.apply(qapp, mode)
    try:
        danger, accent = th.color("danger"), th.color("accent")
        for name, colour in (("Danger", danger), ("Primary", accent)):
            button = QPushButton("Forget everything")
            button.setObjectName(name)
            qtbot.addWidget(button)
            button.resize(200, 34)
            button.show()
            assert any(_near(c, colour) for c in _pixels(button)), f"enabled {name} shows it"
            button.setEnabled(False)
            shown = [c for c in _pixels(button) if _near(c, colour)]
            assert shown == [], f"a disabled {name} button still shows {colour.name()} ({mode})"
    finally:
        theme.apply(qapp, "light")
