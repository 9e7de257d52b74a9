"""Saving screenshots for people (README, reviews) in tests/screenshots/, checked as they are saved.

The tests that take them assert on what the picture shows; this helper asserts that the file
really holds the widget: a PNG of its size (times the device pixel ratio) that is not blank,
and that no widget in it is drawn over another by a layout squeezed below its contents.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication, QWidget

from tests.support.waits import settle, wait_until
from tests.ui.realwin.checks import overlapping

SHOTS = Path(__file__).resolve().parents[1] / "screenshots"
"""Where screenshots go (git-ignored; README pictures are copied from here by hand)."""


def save_screenshot(widget: QWidget, name: str) -> QImage:
    """Grab the shown `widget` into tests/screenshots/NAME.png and check the saved file."""
    assert widget.isVisible(), f"{name}: {type(widget).__name__} is not shown"
    wait_until(
        lambda: _settled_apart(widget),
        1.0,
        message=lambda: (
            f"{name}: widgets drawn over each other:\n" + "\n".join(overlapping(widget))
        ),
    )
    SHOTS.mkdir(exist_ok=True)
    path = SHOTS / f"{name}.png"
    pixmap = widget.grab()
    assert pixmap.save(str(path)), f"{name}: could not write {path}"
    image = QImage(str(path))
    assert not image.isNull(), f"{name}: {path} is not a readable PNG"
    ratio = pixmap.devicePixelRatio()
    expected = (round(widget.width() * ratio), round(widget.height() * ratio))
    assert (image.width(), image.height()) == expected, f"{name}: wrong size"
    step_x, step_y = max(1, image.width() // 24), max(1, image.height() // 24)
    colours = {
        image.pixel(x, y)
        for x in range(0, image.width(), step_x)
        for y in range(0, image.height(), step_y)
    }
    assert len(colours) > 3, f"{name}: the picture is (nearly) blank"
    return image


def _settled_apart(widget: QWidget) -> bool:
    """Settle the queued layout work (a re-fit on a zero-delay timer, e.g. the chat window's
    card area after its composer grew, can still be queued on a loaded machine), then
    whether no layout in `widget` draws one widget over another."""
    settle()
    return not overlapping(widget)


WINDOW_SIZES = [(400, 760), (900, 760), (1600, 760)]
"""The chat window's narrow, usual and wide sizes for screenshots."""


def save_themed(widget: QWidget, name: str, sizes: Iterable[tuple[int, int]]) -> None:
    """Save `widget` light and dark at each (width, height) as NAME-{light,dark}-{width},
    everything queued settled before each picture; the light theme is back afterwards."""
    from koroku_desktop.ui.widgets import theme

    app = QApplication.instance()
    assert isinstance(app, QApplication)
    for mode in ("light", "dark"):
        theme.apply(app, mode)
        for width, height in sizes:
            widget.resize(width, height)
            settle()  # e.g. cards re-fit on a zero-delay timer after the resize
            save_screenshot(widget, f"{name}-{mode}-{width}")
    theme.apply(app, "light")


def save_variants(app: QApplication, widget: QWidget, name: str, *, wide: int = 900) -> None:
    """Save `widget` light and dark, 420 px and `wide` px wide: NAME-{light,dark}-{narrow,wide}."""
    from koroku_desktop.ui.widgets import theme

    height = widget.height()
    for mode in ("light", "dark"):
        theme.apply(app, mode)
        for label, width in (("narrow", 420), ("wide", wide)):
            widget.resize(width, height)
            app.processEvents()
            app.processEvents()
            save_screenshot(widget, f"{name}-{mode}-{label}")
    theme.apply(app, "light")
    widget.resize(wide, height)
