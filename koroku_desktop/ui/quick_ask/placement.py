"""Where the quick-ask popup goes: near the cursor and fully inside the screen, also after it
grows (an approval card), and whether its corners can be round (a compositor draws
transparency) or must be square."""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
from functools import cache

from PySide6.QtCore import QPoint, QRect, QSize
from PySide6.QtGui import QGuiApplication

log = logging.getLogger(__name__)


def place_near(pos: QPoint, size: QSize, area: QRect) -> QPoint:
    """Top-left for a popup of `size` just below-right of `pos`, kept inside `area`."""
    x = min(max(area.left(), pos.x() + 12), area.right() + 1 - size.width())
    y = pos.y() + 16
    if y + size.height() > area.bottom() + 1:
        y = pos.y() - size.height() - 12
    y = min(max(area.top(), y), area.bottom() + 1 - size.height())
    return QPoint(max(area.left(), x), max(area.top(), y))


def fit_inside(rect: QRect, area: QRect) -> QRect:
    """`rect` moved (and, if it is bigger than `area`, shrunk) so it lies wholly inside `area`."""
    width = min(rect.width(), area.width())
    height = min(rect.height(), area.height())
    x = min(max(area.left(), rect.left()), area.right() + 1 - width)
    y = min(max(area.top(), rect.top()), area.bottom() + 1 - height)
    return QRect(x, y, width, height)


@cache
def _x11_compositing() -> bool:
    """Whether an X11 compositing manager owns `_NET_WM_CM_S<screen>` (libX11 via ctypes)."""
    name = ctypes.util.find_library("X11")
    if name is None:
        return False
    try:
        x11 = ctypes.CDLL(name)
        x11.XOpenDisplay.restype = ctypes.c_void_p
        x11.XOpenDisplay.argtypes = [ctypes.c_char_p]
        x11.XDefaultScreen.argtypes = [ctypes.c_void_p]
        x11.XInternAtom.restype = ctypes.c_ulong
        x11.XInternAtom.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
        x11.XGetSelectionOwner.restype = ctypes.c_ulong
        x11.XGetSelectionOwner.argtypes = [ctypes.c_void_p, ctypes.c_ulong]
        x11.XCloseDisplay.argtypes = [ctypes.c_void_p]
        display = x11.XOpenDisplay(None)
        if not display:
            return False
        try:
            screen = x11.XDefaultScreen(display)
            atom = x11.XInternAtom(display, f"_NET_WM_CM_S{screen}".encode(), 0)
            return bool(x11.XGetSelectionOwner(display, atom))
        finally:
            x11.XCloseDisplay(display)
    except (OSError, AttributeError):
        log.debug("cannot ask X11 about a compositor", exc_info=True)
        return False


def translucency_available() -> bool:
    """Whether windows can have transparent (round) corners on this display."""
    platform = QGuiApplication.platformName()
    if platform in ("wayland", "windows", "cocoa"):
        return True
    if platform == "xcb":
        return _x11_compositing()
    return False  # offscreen, minimal, eglfs...: nothing composites
