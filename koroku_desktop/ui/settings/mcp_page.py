"""The MCP part of the settings: servers from mcp.json with their state, tools and errors.

Edits are written to mcp.json and applied at once (servers start or stop without a restart);
the read-only switch lets tools a server marks `readOnlyHint` run without asking.
"""

from __future__ import annotations

import shlex
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QResizeEvent, QShowEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGroupBox,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from koroku_desktop.app.runtime import McpManager, ServerStatus, UrlOpener
from koroku_desktop.app.settings_store import SettingsStore
from koroku_desktop.ui.settings.mcp_log import ServerLogDialog
from koroku_desktop.ui.settings.mcp_sign_in import SignInRow
from koroku_desktop.ui.widgets.button_row import ButtonRow
from koroku_desktop.ui.widgets.controls import note_label, push_button

COLUMNS = ("Server", "Transport", "Enabled", "Status", "Tools")
REFRESH_MS = 1000
NARROW = 480
"""Below this width the list shows the name, whether enabled and the status only."""
RESOURCES_SHOWN = 12
"""Resources listed in a server's details (the model reads any with read_mcp_resource)."""


def _pairs(text: str, sep: str) -> dict[str, str]:
    """`KEY=value` (or `Name: value`) lines -> a dict; raises ValueError on a bad line."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        key, found, value = line.partition(sep)
        if not found or not key.strip():
            raise ValueError(f"write each line as NAME{sep}value: {line.strip()!r}")
        out[key.strip()] = value.strip()
    return out


def _lines(values: dict[str, Any] | None, sep: str) -> str:
    return "\n".join(f"{k}{sep}{v}" for k, v in (values or {}).items())


SaveEntry = Callable[[str, dict[str, Any]], None]
"""Writes one entry to mcp.json; raises ValueError or OSError saying why it cannot."""


class ServerEditor(QDialog):
    """Add or edit one server: a stdio command or a streamable-HTTP URL.

    Save validates and writes through `save`; on a problem the dialog stays open and says why.
    """

    def __init__(
        self, name: str, entry: dict[str, Any], save: SaveEntry, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self._save = save
        self.setWindowTitle("MCP server")
        form = QFormLayout(self)
        self.name = QLineEdit(name)
        self.transport = QComboBox()
        self.transport.addItem("Command (stdio)", "stdio")
        self.transport.addItem("URL (streamable HTTP)", "http")
        self.transport.setCurrentIndex(1 if "url" in entry else 0)
        words = [entry["command"], *entry.get("args", [])] if entry.get("command") else []
        self.command = QLineEdit(shlex.join(words))  # a new server starts empty, not ''""
        self.command.setPlaceholderText("npx -y @modelcontextprotocol/server-filesystem ~/notes")
        self.env = QPlainTextEdit(_lines(entry.get("env"), "="))
        self.env.setPlaceholderText("TOKEN=...")
        self.url = QLineEdit(entry.get("url", ""))
        self.url.setPlaceholderText("http://127.0.0.1:8000/mcp")
        self.headers = QPlainTextEdit(_lines(entry.get("headers"), ": "))
        self.headers.setPlaceholderText("Authorization: Bearer ...")
        self.oauth_note = note_label(
            "A server that asks you to sign in (OAuth) needs no header: save it, then use "
            "Sign in… under the server list."
        )
        self.enabled = QCheckBox("Enabled")
        self.enabled.setChecked(entry.get("enabled", True) is not False)
        self.error = QLabel("")
        self.error.setObjectName("FieldError")
        self.error.setWordWrap(True)
        for label, widget in (
            ("Name", self.name),
            ("Transport", self.transport),
            ("Command", self.command),
            ("Environment", self.env),
            ("URL", self.url),
            ("Headers", self.headers),
            ("", self.oauth_note),
            ("", self.enabled),
            ("", self.error),
        ):
            form.addRow(label, widget)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)
        self.transport.currentIndexChanged.connect(self._show_fields)
        self._show_fields()

    def _show_fields(self) -> None:
        stdio = self.transport.currentData() == "stdio"
        for widget in (self.command, self.env):
            widget.setEnabled(stdio)
        for widget in (self.url, self.headers):
            widget.setEnabled(not stdio)
        self.oauth_note.setVisible(not stdio)

    def entry(self) -> dict[str, Any]:
        """The mcp.json entry typed in; raises ValueError saying what is wrong."""
        out: dict[str, Any] = {}
        if self.transport.currentData() == "stdio":
            words = shlex.split(self.command.text())
            if not words:
                raise ValueError("enter the command that starts the server")
            program = Path(words[0]).expanduser()
            if shutil.which(str(program)) is None:
                raise ValueError(
                    f"there is no program {words[0]!r} on this computer (not found on PATH); "
                    "check the spelling or give its full path"
                )
            out["command"], out["args"] = words[0], words[1:]
            env = _pairs(self.env.toPlainText(), "=")
            if env:
                out["env"] = env
        else:
            out["url"] = self.url.text().strip()
            headers = _pairs(self.headers.toPlainText(), ":")
            if headers:
                out["headers"] = headers
        if not self.enabled.isChecked():
            out["enabled"] = False
        return out

    def show_error(self, text: str) -> None:
        """Why the entry was not saved."""
        self.error.setText(text)

    def accept(self) -> None:
        """Save, or stay open with the reason it could not be saved."""
        try:
            self._save(self.name.text(), self.entry())
        except (ValueError, OSError) as exc:
            self.show_error(f"Not saved: {exc}")
            return
        super().accept()


class McpSection(QGroupBox):
    """Servers, their status and tools, add/edit/remove/enable, and the read-only switch."""

    def __init__(
        self,
        manager: McpManager | None,
        settings: SettingsStore,
        parent: QWidget | None = None,
        open_url: UrlOpener | None = None,
    ) -> None:
        super().__init__("MCP servers", parent)
        self.manager = manager
        self.settings = settings
        col = QVBoxLayout(self)
        where = manager.config_path if manager is not None else "mcp.json"
        about = note_label(
            f"Servers from {where} (the mcpServers format of Claude "
            "desktop and Cursor). Koroku asks before every call, like for shell commands."
        )
        col.addWidget(about)
        self.trust = QCheckBox("Don't ask before read-only tools")
        self.trust.setToolTip("Run the tools a server marks read-only without asking first")
        self.trust.setChecked(settings.effective.mcp_trust_read_only)
        self.trust.toggled.connect(lambda on: settings.update({"mcp_trust_read_only": bool(on)}))
        col.addWidget(self.trust)
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(COLUMNS)
        self.tree.setRootIsDecorated(False)
        header = self.tree.header()  # the name takes the room left, elided: never sideways
        header.setStretchLastSection(False)
        header.setMinimumSectionSize(36)
        for c in range(len(COLUMNS)):
            mode = QHeaderView.ResizeMode
            header.setSectionResizeMode(c, mode.Stretch if c == 0 else mode.ResizeToContents)
        self.tree.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.tree.currentItemChanged.connect(lambda *_: self._show_details())
        col.addWidget(self.tree)
        self.details = QLabel("")
        self.details.setWordWrap(True)
        self.details.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        col.addWidget(self.details)
        self.sign_in_row = SignInRow(manager, open_url, self)
        col.addWidget(self.sign_in_row)
        self.error = QLabel("")
        self.error.setObjectName("FieldError")
        self.error.setWordWrap(True)
        col.addWidget(self.error)
        self.add_button = push_button("Add…", self.add_server)
        self.edit_button = push_button("Edit…", self.edit_server)
        self.toggle_button = push_button("Disable", self.toggle_server)
        self.remove_button = push_button("Remove", self.remove_server)
        self.log_button = push_button(
            "Log…", self.show_log, tip="The server's stderr, log messages and Koroku's notes on it"
        )
        self.button_row = ButtonRow(
            [
                self.add_button,
                self.edit_button,
                self.toggle_button,
                self.remove_button,
                self.log_button,
            ]
        )
        col.addWidget(self.button_row)
        self._statuses: list[ServerStatus] = []
        self.editor: ServerEditor | None = None
        self.log_dialog: ServerLogDialog | None = None
        self._timer = QTimer(self)
        self._timer.setInterval(REFRESH_MS)
        self._timer.timeout.connect(self.refresh)
        self.refresh()
        self._show_details()  # with no server at all, only Add is offered

    def resizeEvent(self, event: QResizeEvent) -> None:
        """Narrow: the transport and tool count give way (the details below say them)."""
        super().resizeEvent(event)
        narrow = self.width() < NARROW
        for c in (1, 4):
            self.tree.setColumnHidden(c, narrow)

    def showEvent(self, event: QShowEvent) -> None:
        """Follow the servers' state while shown."""
        super().showEvent(event)
        self.refresh()
        self._timer.start()

    def hideEvent(self, event: Any) -> None:
        """Stop following when hidden."""
        self._timer.stop()
        super().hideEvent(event)

    def refresh(self) -> None:
        """Re-read the servers' state (mcp.json edits are picked up here too)."""
        if self.manager is None:
            return
        self.manager.reload_if_changed()
        statuses = self.manager.statuses()
        if self.manager.config_error:
            self.error.setText(self.manager.config_error)
        elif not self.error.text().startswith("Not saved"):
            self.error.setText("")
        if statuses == self._statuses:
            return
        current = self.selected_name()
        self._statuses = statuses
        self.tree.clear()
        for s in statuses:
            state = "sign in needed" if s.sign_in == "sign in needed" else s.state
            row = (s.name, s.transport, "yes" if s.enabled else "no", state, str(len(s.tools)))
            item = QTreeWidgetItem(list(row))
            item.setData(0, Qt.ItemDataRole.UserRole, s.name)
            self.tree.addTopLevelItem(item)
            if s.name == current:
                self.tree.setCurrentItem(item)
        self._show_details()

    def selected_name(self) -> str | None:
        """The server picked in the list."""
        item = self.tree.currentItem()
        return None if item is None else str(item.data(0, Qt.ItemDataRole.UserRole))

    def _selected(self) -> ServerStatus | None:
        name = self.selected_name()
        return next((s for s in self._statuses if s.name == name), None)

    def _show_details(self) -> None:
        s = self._selected()
        self.toggle_button.setText("Enable" if s is not None and not s.enabled else "Disable")
        for button in (self.edit_button, self.toggle_button, self.remove_button, self.log_button):
            button.setEnabled(s is not None)
        self.sign_in_row.show_server(s)
        if s is None:
            self.details.setText("")
            return
        lines = [s.target] if s.target else []
        for tool in s.tools:
            mark = " (read-only)" if tool.read_only else ""
            seen = s.model_names.get(tool.name)
            shown = f"{seen} ← {tool.name}" if seen and seen != tool.name else tool.name
            lines.append(f"• {shown}{mark}: {tool.description}")
        listed = s.resources[:RESOURCES_SHOWN]
        for res in listed:
            kind = "template" if res.template else (res.mime_type or "resource")
            lines.append(f"◦ {res.name} — {res.uri} ({kind})")
        if len(s.resources) > len(listed):
            lines.append(f"◦ … and {len(s.resources) - len(listed)} more resources")
        if s.last_error:
            lines.append(f"Last error: {s.last_error}")
        if s.protocol:
            lines.append(f"Protocol: MCP {s.protocol}")
        self.details.setText("\n".join(lines))

    def _edit(self, name: str, entry: dict[str, Any], replaces: str | None) -> ServerEditor | None:
        manager = self.manager
        if manager is None:
            return None

        def save(new_name: str, new_entry: dict[str, Any]) -> None:
            manager.save_entry(new_name, new_entry, replaces)

        self.editor = ServerEditor(name, entry, save, self)
        self.editor.accepted.connect(self.refresh)
        self.editor.open()  # not exec(): no nested event loop under qasync
        return self.editor

    def add_server(self) -> ServerEditor | None:
        """Open the editor for a new server."""
        return self._edit("", {}, None)

    def edit_server(self) -> ServerEditor | None:
        """Open the editor for the selected server."""
        name = self.selected_name()
        if self.manager is None or name is None:
            return None
        return self._edit(name, self.manager.entry(name) or {}, name)

    def show_log(self) -> ServerLogDialog | None:
        """Open the selected server's log (stderr, SDK records, its log notifications)."""
        name = self.selected_name()
        if self.manager is None or name is None:
            return None
        self.log_dialog = ServerLogDialog(name, self.manager.log_path(name), self)
        self.log_dialog.open()
        return self.log_dialog

    def toggle_server(self) -> None:
        """Enable or disable the selected server."""
        s, manager = self._selected(), self.manager
        if manager is not None and s is not None and s.state != "invalid":
            self._guard(lambda: manager.set_enabled(s.name, not s.enabled))

    def remove_server(self) -> None:
        """Remove the selected server from mcp.json."""
        name, manager = self.selected_name(), self.manager
        if manager is not None and name is not None:
            self._guard(lambda: manager.remove_entry(name))

    def _guard(self, action: Any) -> None:
        try:
            action()
        except (ValueError, OSError) as exc:
            self.error.setText(f"Not saved: {exc}")
        self.refresh()
