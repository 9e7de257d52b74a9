"""Icons from resources/icons, loaded with importlib.resources and cached."""

from __future__ import annotations

import importlib.resources
from functools import cache
from typing import Literal

from PySide6.QtCore import QByteArray, QSize, Qt
from PySide6.QtGui import QIcon, QImage, QPainter, QPixmap
from PySide6.QtSvg import QSvgRenderer

TrayState = Literal["idle", "working", "approval", "error", "unread"]
TRAY_STATES: tuple[TrayState, ...] = ("idle", "working", "approval", "error", "unread")


def svg_bytes(name: str) -> bytes:
    """The raw SVG of `resources/icons/<name>.svg`."""
    return importlib.resources.files("resources.icons").joinpath(f"{name}.svg").read_bytes()


def _pixmap(data: bytes, size: int) -> QPixmap:
    renderer = QSvgRenderer(QByteArray(data))
    image = QImage(QSize(size, size), QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    renderer.render(painter)
    painter.end()
    return QPixmap.fromImage(image)


@cache
def icon(name: str) -> QIcon:
    """A multi-size QIcon rendered from an SVG resource."""
    data = svg_bytes(name)
    result = QIcon()
    for size in (16, 22, 24, 32, 48, 64, 128, 256):
        result.addPixmap(_pixmap(data, size))
    return result


def app_icon() -> QIcon:
    """The application icon."""
    return icon("app")


def tray_icon(state: TrayState) -> QIcon:
    """The tray icon for a state: idle, working, approval, error or unread (a task's
    result nobody has looked at yet)."""
    return icon(f"tray-{state}")


@cache
def tinted_icon(name: str, color: str) -> QIcon:
    """A line icon from resources/icons with its `currentColor` painted in `color` (a theme
    colour), so the header's icons follow light and dark."""
    data = svg_bytes(name).replace(b"currentColor", color.encode())
    result = QIcon()
    for size in (16, 20, 24, 32, 48):
        result.addPixmap(_pixmap(data, size))
    return result
