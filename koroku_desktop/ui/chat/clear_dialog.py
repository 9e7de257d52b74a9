"""The clear-conversation question: sized for its text, the destructive answer styled as such,
Cancel the default (Enter never clears by accident)."""

from __future__ import annotations

from PySide6.QtWidgets import QMessageBox, QPushButton, QWidget

TEXT = "Start a fresh conversation?"
DETAIL = (
    "Koroku stops seeing the current conversation. Nothing is deleted: it stays in the "
    "history and can still be recalled."
)


def clear_question(parent: QWidget) -> tuple[QMessageBox, QPushButton]:
    """The (not yet shown) question and its Clear button."""
    box = QMessageBox(parent)
    box.setObjectName("ClearQuestion")
    box.setIcon(QMessageBox.Icon.Question)
    box.setWindowTitle("Clear conversation")
    box.setText(f"<b>{TEXT}</b>")
    box.setInformativeText(DETAIL)
    # QMessageBox wraps its text at a narrow width; give the labels room for two lines.
    box.setStyleSheet(
        "QLabel#qt_msgbox_label, QLabel#qt_msgbox_informativelabel { min-width: 360px; }"
    )
    box.setStandardButtons(QMessageBox.StandardButton.Cancel)
    clear = box.addButton("Clear conversation", QMessageBox.ButtonRole.DestructiveRole)
    clear.setObjectName("DangerFilled")
    box.setDefaultButton(QMessageBox.StandardButton.Cancel)
    return box, clear
