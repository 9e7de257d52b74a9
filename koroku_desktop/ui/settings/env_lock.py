"""A setting the environment overrides is shown locked, with the variable named under it."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QWidget

from koroku_desktop.app.settings_store import overriding_variable


def env_lock(widget: QWidget, name: str) -> QLabel | None:
    """Disable `widget` when an environment variable sets the setting `name`, and return
    the muted note that says which one (for the caller to lay out); None when none does."""
    var = overriding_variable(name)
    if var is None:
        return None
    widget.setEnabled(False)
    widget.setToolTip(f"Set by {var} in the environment, which wins over this setting.")
    note = QLabel(f"Set by the {var} environment variable.")
    note.setObjectName("Muted")
    note.setWordWrap(True)
    return note
