"""ResourcePicker: choose an MCP resource to attach, from the composer's attach button.

A search box over every connected server's resources and URI templates; arrows move, Enter
attaches a resource (or, for a template, asks for its variables in fields completed by the
server), Esc goes back from the fields to the list, then closes. The list follows the
servers' list changes while it is open (`set_resources`). It reports `chosen(info, uri)`;
reading and storing the resource is the caller's.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from PySide6.QtCore import QEvent, QObject, QStringListModel, Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QCompleter,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from koroku_desktop.app.runtime import McpResourceInfo, uri_template
from koroku_desktop.ui.widgets.controls import search_field
from koroku_desktop.ui.widgets.two_line_delegate import TwoLineDelegate

Completer = Callable[[McpResourceInfo, str, str, dict[str, str]], Awaitable[list[str]]]
"""The server's completions of one template variable (template, name, typed, known)."""

ROLE = Qt.ItemDataRole.UserRole


def item_text(info: McpResourceInfo) -> str:
    """Two lines: the resource's name (a template says so), then its server and URI."""
    head = f"{info.name}  (template)" if info.template else info.name
    return f"{head}\n{info.server} · {info.uri}"


def matches(info: McpResourceInfo, query: str) -> bool:
    """Whether every word of `query` is in its name, server, URI or description."""
    hay = f"{info.name} {info.server} {info.uri} {info.description}".casefold()
    return all(word in hay for word in query.casefold().split())


class ResourcePicker(QDialog):
    """A searchable list of MCP resources and templates; `chosen(info, uri)` on Enter."""

    chosen = Signal(object, str)  # McpResourceInfo, the URI to read

    def __init__(
        self,
        resources: list[McpResourceInfo],
        complete: Completer | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("ResourcePicker")
        self.setWindowTitle("Attach an MCP resource")
        self._complete = complete
        self._resources: list[McpResourceInfo] = []
        self._template: McpResourceInfo | None = None
        self._fields: dict[str, QLineEdit] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        col = QVBoxLayout(self)
        col.setContentsMargins(12, 12, 12, 12)
        col.setSpacing(8)
        self.search = search_field(
            QLineEdit(),
            "ResourceSearch",
            "Search resources — ↑↓ choose, Enter attaches",
            self._filter,
        )
        self.search.installEventFilter(self)
        self.search.returnPressed.connect(self._accept_current)
        col.addWidget(self.search)
        self.list = QListWidget()
        self.list.setObjectName("ResourceList")
        self.list.setItemDelegate(TwoLineDelegate(self.list))
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setUniformItemSizes(True)
        self.list.itemActivated.connect(lambda _item: self._accept_current())
        self.list.currentItemChanged.connect(lambda *_: self._describe())
        col.addWidget(self.list, 1)
        self.about = QLabel()
        self.about.setObjectName("ResourceAbout")
        self.about.setWordWrap(True)
        col.addWidget(self.about)
        self.form_box = QWidget()
        self.form = QFormLayout(self.form_box)
        self.form.setContentsMargins(0, 0, 0, 0)
        self.form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
        self.form_box.setVisible(False)
        col.addWidget(self.form_box)
        self.preview = QLabel()
        self.preview.setObjectName("ResourceUri")
        self.preview.setWordWrap(True)
        self.preview.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.preview.setVisible(False)
        col.addWidget(self.preview)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.attach_button = buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.attach_button.setText("Attach")
        for button in buttons.findChildren(QPushButton):  # Enter belongs to the box typed in
            button.setAutoDefault(False)
            button.setDefault(False)
        buttons.accepted.connect(self._accept_current)
        buttons.rejected.connect(self.reject)
        col.addWidget(buttons)
        self.set_resources(resources)
        self.search.setFocus()

    # -- the list ------------------------------------------------------------------------

    def set_resources(self, resources: list[McpResourceInfo]) -> None:
        """Show `resources` (the servers' current list), keeping the search and the choice."""
        self._resources = list(resources)
        self._filter()

    def _filter(self) -> None:
        current = self.list.currentItem()
        keep = current.data(ROLE) if current is not None else None
        self.list.clear()
        for info in self._resources:
            if matches(info, self.search.text()):
                item = QListWidgetItem(item_text(info))
                item.setData(ROLE, info)
                item.setToolTip(f"{info.uri}\n{info.description}".strip())
                self.list.addItem(item)
        rows = [self.list.item(i).data(ROLE) for i in range(self.list.count())]
        self.list.setCurrentRow(rows.index(keep) if keep in rows else 0)
        self._describe()

    def _describe(self) -> None:
        item = self.list.currentItem()
        if item is None:
            self.about.setText("No resource matches." if self._resources else "No resources.")
            return
        info: McpResourceInfo = item.data(ROLE)
        kind = info.mime_type or "type not given"
        self.about.setText(f"{info.description or info.name} — {kind}")

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Up and Down in the search box move through the list."""
        moving = (Qt.Key.Key_Up, Qt.Key.Key_Down, Qt.Key.Key_PageUp, Qt.Key.Key_PageDown)
        if (
            watched is self.search
            and isinstance(event, QKeyEvent)
            and event.type() == QEvent.Type.KeyPress
            and event.key() in moving
        ):
            self.list.event(event)
            return True
        return super().eventFilter(watched, event)

    # -- choosing ------------------------------------------------------------------------

    def _accept_current(self) -> None:
        if self._template is not None:
            self._attach_template()
            return
        item = self.list.currentItem()
        if item is None:
            return
        info: McpResourceInfo = item.data(ROLE)
        if info.template:
            self._ask_variables(info)
        else:
            self.chosen.emit(info, info.uri)
            self.accept()

    def _ask_variables(self, info: McpResourceInfo) -> None:
        """Show a field for each of the template's variables (completed by its server)."""
        self._template = info
        for name in uri_template.variables(info.uri):
            field = QLineEdit()
            field.setObjectName(f"TemplateField_{name}")
            field.setAccessibleName(name)
            completer = QCompleter(QStringListModel([], field), field)
            completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
            field.setCompleter(completer)
            field.textEdited.connect(lambda text, n=name: self._suggest(n, text))
            field.textChanged.connect(self._show_uri)
            field.returnPressed.connect(lambda n=name: self._next_field(n))
            self._fields[name] = field
            self.form.addRow(f"{name}:", field)
            self._suggest(name, "")
        self.list.setEnabled(False)
        self.search.setEnabled(False)
        self.form_box.setVisible(True)
        self.preview.setVisible(True)
        self._show_uri()
        fields = list(self._fields.values())
        if fields:
            fields[0].setFocus()

    def _show_uri(self) -> None:
        if self._template is not None:
            self.preview.setText(f"URI: {self._uri()}")

    def _uri(self) -> str:
        assert self._template is not None
        values = {n: f.text().strip() for n, f in self._fields.items()}
        return uri_template.expand(self._template.uri, values)

    def _next_field(self, name: str) -> None:
        names = list(self._fields)
        missing = [n for n in names if not self._fields[n].text().strip()]
        if missing:
            later = [n for n in names[names.index(name) + 1 :] if n in missing]
            self._fields[(later or missing)[0]].setFocus()
        else:
            self._attach_template()

    def _attach_template(self) -> None:
        missing = [n for n, f in self._fields.items() if not f.text().strip()]
        if missing:
            self.about.setText(f"Fill in {', '.join(missing)}.")
            self._fields[missing[0]].setFocus()
            return
        assert self._template is not None
        self.chosen.emit(self._template, self._uri())
        self.accept()

    def _back_to_list(self) -> None:
        self._template = None
        while self.form.rowCount():
            self.form.removeRow(0)
        self._fields.clear()
        self.form_box.setVisible(False)
        self.preview.setVisible(False)
        self.list.setEnabled(True)
        self.search.setEnabled(True)
        self._describe()
        self.search.setFocus()

    def _suggest(self, name: str, text: str) -> None:
        """Ask the server for completions of `name` and offer them under its field."""
        if self._complete is None or self._template is None:
            return
        template = self._template
        known = {n: f.text() for n, f in self._fields.items() if n != name and f.text()}
        complete = self._complete

        async def ask() -> None:
            options = await complete(template, name, text, known)
            field = self._fields.get(name)
            if field is None or self._template is not template:
                return  # gone back to the list meanwhile
            completer = field.completer()
            model = completer.model()
            if isinstance(model, QStringListModel):
                model.setStringList(options)
            if options and field.hasFocus() and text:
                completer.complete()

        task = asyncio.ensure_future(ask())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        """Esc leaves a template's fields for the list; Esc on the list closes; Enter is the
        focused box's own (never the dialog's default button)."""
        if event.key() == Qt.Key.Key_Escape and self._template is not None:
            self._back_to_list()
            return
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            return  # the search box, the list and the fields act on Enter themselves
        super().keyPressEvent(event)
