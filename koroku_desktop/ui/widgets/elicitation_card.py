"""ElicitationCard: an MCP server's request for input, inline like an approval card.

A form gets one field per property (text, a yes/no box, a choice list); a URL request
names the host and opens the page only on "Open". Keyboard first: the first field has the
focus, Ctrl+Enter submits, Esc cancels; Decline says no to the server.
"""

from __future__ import annotations

import html
from typing import Any
from urllib.parse import urlsplit

from PySide6.QtCore import Qt, QUrl, Signal
from PySide6.QtGui import QDesktopServices, QKeyEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from koroku_desktop.app.runtime import McpElicitAnswer, McpElicitation, elicit_form
from koroku_desktop.ui.widgets.controls import vertical_scroll

FORM_MAX_H = 320
FORM_MIN_H = 120
"""The heights a long form shows before it scrolls (more when the window has room)."""


class ElicitationCard(QFrame):
    """Fields (or a URL) of one request; emits `answered` with an McpElicitAnswer once."""

    answered = Signal(object)  # McpElicitAnswer

    def __init__(self, request: McpElicitation, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ApprovalCard")  # the approval card's look
        self.request = request
        self._done = False
        self.fields: dict[str, QWidget] = {}
        col = QVBoxLayout(self)
        col.setContentsMargins(14, 12, 14, 12)
        title = QLabel(f"MCP server “{request.server}” asks: {request.message}")
        title.setObjectName("ApprovalTitle")
        title.setWordWrap(True)
        col.addWidget(title)
        self.error = QLabel("")
        self.error.setObjectName("FieldError")
        self.error.setWordWrap(True)
        self.error.setVisible(False)
        row = QHBoxLayout()
        if request.url is not None:
            host = urlsplit(request.url).hostname or request.url
            note = QLabel(
                f"It wants you to open a page on <b>{html.escape(host)}</b>:<br>"
                f"<code>{html.escape(request.url)}</code>"
            )
            note.setWordWrap(True)
            col.addWidget(note)
            self.submit = QPushButton(f"&Open {host}")
        else:
            inner = QWidget()
            form = QFormLayout(inner)
            form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapAllRows)  # labels above fields
            form.setContentsMargins(0, 0, 8, 0)
            required = set(request.schema.get("required", []))
            for name, prop in (request.schema.get("properties") or {}).items():
                label = str(prop.get("title") or name) + ("" if name in required else " (optional)")
                field = self._field(prop)
                field.setToolTip(str(prop.get("description") or ""))
                self.fields[name] = field
                form.addRow(label, field)
            scroll = vertical_scroll(inner)  # a long form scrolls; its fields keep their height
            natural = inner.sizeHint().height() + 4
            scroll.setMinimumHeight(min(natural, FORM_MIN_H))
            scroll.setMaximumHeight(min(natural, FORM_MAX_H))
            col.addWidget(scroll)
            self.submit = QPushButton("&Submit")
        col.addWidget(self.error)
        self.submit.setObjectName("Primary")
        self.decline = QPushButton("&Decline")
        self.cancel = QPushButton("Cancel")
        self.submit.clicked.connect(self._accept)
        self.decline.clicked.connect(lambda: self._finish(McpElicitAnswer("decline")))
        self.cancel.clicked.connect(lambda: self._finish(McpElicitAnswer("cancel")))
        row.addWidget(self.submit)
        row.addStretch(1)
        row.addWidget(self.decline)
        row.addWidget(self.cancel)
        col.addLayout(row)

    @staticmethod
    def _field(prop: dict[str, Any]) -> QWidget:
        options = elicit_form.choices(prop)
        default = prop.get("default")
        if prop.get("type") == "boolean":
            box = QCheckBox()
            box.setChecked(bool(default))
            return box
        if options and prop.get("type") != "array":
            combo = QComboBox()
            for value, label in options:
                combo.addItem(label, value)
            if default is not None:
                combo.setCurrentIndex(max(0, combo.findData(str(default))))
            return combo
        edit = QLineEdit()
        if isinstance(default, list):
            edit.setText(", ".join(str(d) for d in default))
        elif default is not None:
            edit.setText(str(default))
        if options:
            edit.setPlaceholderText("comma-separated: " + ", ".join(lb for _, lb in options))
        return edit

    def values(self) -> dict[str, Any]:
        """The form's answers, typed; raises ValueError naming the field that is wrong."""
        required = set(self.request.schema.get("required", []))
        props = self.request.schema.get("properties") or {}
        out: dict[str, Any] = {}
        for name, field in self.fields.items():
            if isinstance(field, QCheckBox):
                out[name] = field.isChecked()
                continue
            if isinstance(field, QComboBox):
                out[name] = field.currentData()
                continue
            assert isinstance(field, QLineEdit)
            raw = field.text().strip()
            if not raw:
                if name in required:
                    raise ValueError(f"{name}: required")
                continue
            try:
                out[name] = elicit_form.convert(raw, props[name])
            except ValueError as exc:
                raise ValueError(f"{name}: {exc}") from None
        return out

    def _accept(self) -> None:
        if self.request.url is not None:
            QDesktopServices.openUrl(QUrl(self.request.url))
            self._finish(McpElicitAnswer("accept"))
            return
        try:
            content = self.values()
        except ValueError as exc:
            self.error.setText(str(exc))
            self.error.setVisible(True)
            return
        self._finish(McpElicitAnswer("accept", content))

    def _finish(self, answer: McpElicitAnswer) -> None:
        if not self._done:
            self._done = True
            self.answered.emit(answer)

    def focus_default(self) -> None:
        """The first field (or the Open button) takes the keyboard."""
        first = next(iter(self.fields.values()), None)
        (first or self.submit).setFocus(Qt.FocusReason.OtherFocusReason)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        """Ctrl+Enter submits, Esc cancels."""
        enter = event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
        if enter and event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            self._accept()
        elif event.key() == Qt.Key.Key_Escape:
            self._finish(McpElicitAnswer("cancel"))
        else:
            super().keyPressEvent(event)
