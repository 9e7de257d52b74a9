"""No window outlives its test: every top-level widget a test left behind is deleted after it.

A test's app is quit and its window deleted, but dialogs, menus and popups it opened (the
viewer, Settings, a tray or context menu) were kept alive by connections to the one
QApplication. They piled up over a worker's run (hundreds by the end of tests/ui), and every
later theme change, focus change and event pass went through all of them: the last Qt tests
of a worker cost several times what they cost alone.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

import pytest


def _application() -> Any:
    """The QApplication if Qt is in use in this process (never imports Qt itself)."""
    widgets = sys.modules.get("PySide6.QtWidgets")
    return None if widgets is None else widgets.QApplication.instance()


def _key(widget: Any) -> int:
    import shiboken6

    return int(shiboken6.getCppPointer(widget)[0])


def _keys() -> set[int]:
    app = _application()
    return set() if app is None else {_key(w) for w in app.topLevelWidgets()}


_KEPT: set[int] = set()
"""Top-level widgets a module- or session-scoped fixture made: theirs, never deleted here (even
when a test body first asked for the fixture, with `request.getfixturevalue`)."""


@pytest.hookimpl(wrapper=True)
def pytest_fixture_setup(fixturedef: pytest.FixtureDef[Any]) -> Iterator[object]:
    if fixturedef.scope == "function":
        return (yield)
    before = _keys()
    try:
        return (yield)
    finally:
        _KEPT.update(_keys() - before)


@pytest.fixture(autouse=True)
def _delete_leftover_windows() -> Iterator[None]:
    """After the test (and its fixtures), delete the top-level widgets it created."""
    keep = _keys()
    yield
    app = _application()
    if app is None:
        return
    import shiboken6

    from tests.support.waits import settle

    keep |= _KEPT
    left = [w for w in app.topLevelWidgets() if _key(w) not in keep]
    if not left:
        return
    for widget in left:
        if shiboken6.isValid(widget):
            widget.close()
            widget.deleteLater()
    settle()
