"""SettingsDialog: every setting in one place, validated next to each field, applied on Save.

One model everywhere: nothing in the form changes until Save (Cancel leaves everything as it
was); the one exception is a button that says what it does at once (Store key, Test connection).

Saving validates first (a message beside each bad value, nothing saved), then hands the
user's values to the `SettingsStore` (which writes settings.json and applies them to the
running agent: the next turn uses them), the theme to the app, and the autostart entry to
the desktop. Fields the environment decides are shown disabled and never saved.
"""

from __future__ import annotations

import os
from typing import Any

from pydantic import ValidationError
from PySide6.QtCore import Signal
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import (
    QApplication,
    QCheckBox,
    QComboBox,
    QDialog,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QKeySequenceEdit,
    QLabel,
    QLineEdit,
    QListWidget,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from koroku_desktop import xdg
from koroku_desktop.app.config import Settings
from koroku_desktop.app.lazy_model import LazyGeminiModel
from koroku_desktop.app.runtime import McpManager
from koroku_desktop.app.settings_store import SettingsStore
from koroku_desktop.tools.approval import ApprovalPolicy
from koroku_desktop.ui.settings.env_lock import env_lock
from koroku_desktop.ui.settings.facts_group import FactsGroup
from koroku_desktop.ui.settings.key import ApiKeySection
from koroku_desktop.ui.settings.mcp_page import McpSection
from koroku_desktop.ui.settings.recall_group import RecallGroup
from koroku_desktop.ui.settings.sync_group import SyncControl, SyncGroup
from koroku_desktop.ui.settings.web_group import WebGroup
from koroku_desktop.ui.tasks.panel import TasksPanel, tasks_group
from koroku_desktop.ui.tray import SHORTCUT_HELP
from koroku_desktop.ui.widgets import theme
from koroku_desktop.ui.widgets.controls import note_label, push_button
from koroku_desktop.ui.widgets.facts_editor import FactsKeeper
from koroku_desktop.ui.widgets.icons import app_icon
from koroku_desktop.ui.widgets.narrow_form import narrow_form
from koroku_desktop.ui.widgets.wheel_guard import WheelGuard

MODELS = ("gemini-3-flash-preview", "gemini-3-pro-preview", "gemini-2.5-flash", "gemini-2.5-pro")
THEMES = (("system", "Follow the system"), ("light", "Light"), ("dark", "Dark"))
QUICK_ASK_INTO = (
    ("quick_asks", "Its own conversation, “Quick asks”"),
    ("current", "The chat window's conversation"),
)
SESSION_MARK = " (this session)"


SAVE_NOTE = "Changes apply when you press Save; Cancel keeps everything as it was."


def parse_count(text: str) -> int | None:
    """A whole number typed by a person: `100000`, `100,000`, `100 000` or `100k`."""
    t = text.strip().lower().replace(",", "").replace("_", "").replace(" ", "")
    factor = 1000 if t.endswith("k") else 1
    t = t.removesuffix("k")
    return int(t) * factor if t.isdigit() else None


class FieldError(QLabel):
    """A red message beside a field; hidden while the value is fine."""

    def __init__(self) -> None:
        super().__init__("")
        self.setObjectName("FieldError")
        self.setWordWrap(True)
        self.setStyleSheet(f"color: {theme.current().danger};")
        self.setVisible(False)

    def show_message(self, text: str) -> None:
        """Show `text` (empty hides it)."""
        self.setText(text)
        self.setVisible(bool(text))


class SettingsDialog(QDialog):
    """Edits the settings in `settings`; `applied` carries the settings now in use.

    `policy` holds the tool grants (the session ones are revoked there), `model` the API key.
    """

    applied = Signal(object)  # Settings
    key_changed = Signal()

    def __init__(
        self,
        settings: SettingsStore,
        policy: ApprovalPolicy,
        model: LazyGeminiModel,
        mcp: McpManager | None = None,
        sync: SyncControl | None = None,
        *,
        facts: FactsKeeper | None = None,
        conversation_id: str = "default",
        tasks: TasksPanel | None = None,
    ) -> None:
        """`facts` lists what Koroku knows about the user, to edit (None: the switch only);
        `tasks` is the Scheduled tasks section (None where the app runs none)."""
        super().__init__()
        self.settings = settings
        self.policy = policy
        self.setWindowTitle("Koroku — Settings")
        self.setWindowIcon(app_icon())
        self.resize(640, 760)
        self.errors: dict[str, FieldError] = {}
        self._revoked_session: set[str] = set()
        self._revoked_always: set[str] = set()
        outer = QVBoxLayout(self)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        body = QWidget()
        col = QVBoxLayout(body)
        self.key = ApiKeySection(model, lambda: self.model_box.currentText().strip())
        self.key.key_changed.connect(self.key_changed)
        col.addWidget(self.key)
        col.addWidget(self._agent_group())
        self.recall = RecallGroup()
        col.addWidget(self.recall)
        self.facts = FactsGroup(facts, conversation_id)
        col.addWidget(self.facts)
        self.web = WebGroup()
        col.addWidget(self.web)
        col.addWidget(self._grants_group())
        col.addWidget(self._desktop_group())
        col.addWidget(McpSection(mcp, settings))
        self.tasks = tasks
        if tasks is not None:
            col.addWidget(tasks_group(tasks))
        self.sync = SyncGroup(sync)
        col.addWidget(self.sync)
        col.addStretch(1)
        scroll.setWidget(body)
        outer.addWidget(scroll, 1)
        outer.addLayout(self._buttons())
        self.load(settings.reload())  # another process may have changed the file
        self.wheel_guard = WheelGuard(body)

    # -- building ----------------------------------------------------------------------

    def _field(self, form: QFormLayout, label: str, name: str, widget: QWidget) -> None:
        box = QWidget()
        col = QVBoxLayout(box)
        col.setContentsMargins(0, 0, 0, 0)
        col.setSpacing(2)
        col.addWidget(widget)
        error = FieldError()
        col.addWidget(error)
        self.errors[name] = error
        if (note := env_lock(box, name)) is not None:
            col.addWidget(note)
        form.addRow(label, box)

    def _agent_group(self) -> QGroupBox:
        group = QGroupBox("Agent")
        form = narrow_form(group)
        self.model_box = QComboBox()
        self.model_box.setEditable(True)
        self.model_box.addItems(MODELS)
        self._field(form, "Model", "model", self.model_box)
        self.budget = QLineEdit()
        self.budget.setPlaceholderText("1–500")
        self._field(form, "Tool calls per turn", "max_tool_calls", self.budget)
        self.threshold = QLineEdit()
        self.threshold.setPlaceholderText("2,000–2,000,000 tokens")
        self._field(form, "Compact the context at", "compact_at_tokens", self.threshold)
        row = QWidget()
        rl = QHBoxLayout(row)
        rl.setContentsMargins(0, 0, 0, 0)
        self.workspace = QLineEdit()
        self.workspace.setPlaceholderText("Your home folder")
        rl.addWidget(self.workspace, 1)
        rl.addWidget(push_button("Choose…", self._choose_workspace))
        self._field(form, "Workspace folder", "workspace", row)
        return group

    def _grants_group(self) -> QGroupBox:
        group = QGroupBox("Tool approvals")
        col = QVBoxLayout(group)
        note = note_label("Tools you allowed without asking. Revoke one to be asked again.")
        col.addWidget(note)
        self.no_grants = QLabel("None: Koroku asks before every tool call that needs approval.")
        self.no_grants.setWordWrap(True)
        col.addWidget(self.no_grants)
        row = QHBoxLayout()
        self.grants = QListWidget()
        self.grants.setMaximumHeight(110)
        row.addWidget(self.grants, 1)
        self.revoke_button = push_button("Revoke", self.revoke_selected, name="Danger")
        row.addWidget(self.revoke_button)
        col.addLayout(row)
        return group

    def _desktop_group(self) -> QGroupBox:
        group = QGroupBox("Desktop")
        form = narrow_form(group)
        self.shortcut = QKeySequenceEdit()
        self._field(form, "Quick-ask shortcut", "quick_ask_shortcut", self.shortcut)
        help_label = note_label(SHORTCUT_HELP)
        form.addRow("", help_label)
        self.quick_into = QComboBox()
        for value, label in QUICK_ASK_INTO:
            self.quick_into.addItem(label, value)
        self._field(form, "Quick ask asks into", "quick_ask_into", self.quick_into)
        self.login = QCheckBox("Start Koroku in the tray when I log in")
        self._field(form, "Start at login", "start_at_login", self.login)
        self.theme_box = QComboBox()
        for value, label in THEMES:
            self.theme_box.addItem(label, value)
        self._field(form, "Theme", "theme", self.theme_box)
        return group

    def _buttons(self) -> QHBoxLayout:
        row = QHBoxLayout()
        self.status = note_label(SAVE_NOTE)
        row.addWidget(self.status, 1)
        row.addWidget(push_button("Cancel", self.reject))
        self.save_button = push_button("Save", self._save_and_close, name="Primary")
        self.save_button.setDefault(True)
        row.addWidget(self.save_button)
        return row

    # -- values ------------------------------------------------------------------------

    def load(self, s: Settings) -> None:
        """Fill the fields from settings."""
        self.model_box.setCurrentText(s.model)
        self.budget.setText(str(s.max_tool_calls))
        self.threshold.setText(f"{s.compact_at_tokens:,}")
        self.workspace.setText(s.workspace)
        self.shortcut.setKeySequence(QKeySequence(s.quick_ask_shortcut))
        self.quick_into.setCurrentIndex([v for v, _ in QUICK_ASK_INTO].index(s.quick_ask_into))
        self.login.setChecked(xdg.autostart_enabled() or s.start_at_login)
        self.theme_box.setCurrentIndex([v for v, _ in THEMES].index(s.theme))
        self.recall.load(s)
        self.facts.load(s)
        self.web.load(s)
        self.sync.load(s)
        self.grants.clear()
        policy = self.policy
        for tool in sorted(set(s.always_allow) | policy.always_granted()):
            self.grants.addItem(tool)
        for tool in sorted(policy.session_granted() - policy.always_granted()):
            self.grants.addItem(tool + SESSION_MARK)
        self._grants_shown()
        self._shown = self._values()

    def _grants_shown(self) -> None:
        has = self.grants.count() > 0
        self.grants.setVisible(has)
        self.revoke_button.setVisible(has)
        self.no_grants.setVisible(not has)

    def grant_names(self) -> list[str]:
        """The grants still listed (session ones marked)."""
        return [self.grants.item(i).text() for i in range(self.grants.count())]

    def revoke_selected(self) -> None:
        """Take the selected grant off the list (applied on Save)."""
        row = self.grants.currentRow()
        item = self.grants.takeItem(row if row >= 0 else 0)
        if item is not None and item.text().endswith(SESSION_MARK):
            self._revoked_session.add(item.text().removesuffix(SESSION_MARK))
        elif item is not None:
            self._revoked_always.add(item.text())
        self._grants_shown()

    def _choose_workspace(self) -> None:
        start = self.workspace.text().strip() or os.path.expanduser("~")
        dialog = QFileDialog(self, "Workspace folder", start)
        dialog.setFileMode(QFileDialog.FileMode.Directory)
        dialog.setOption(QFileDialog.Option.ShowDirsOnly, True)
        dialog.fileSelected.connect(self.workspace.setText)
        dialog.open()

    def _values(self) -> dict[str, Any]:
        """The values the fields show, by setting name (a count that does not parse: None)."""
        keys = self.shortcut.keySequence()
        values: dict[str, Any] = {
            "model": self.model_box.currentText().strip(),
            "max_tool_calls": parse_count(self.budget.text()),
            "compact_at_tokens": parse_count(self.threshold.text()),
            "workspace": self.workspace.text().strip(),
            "quick_ask_shortcut": keys.toString(QKeySequence.SequenceFormat.PortableText),
            "quick_ask_into": self.quick_into.currentData(),
            "start_at_login": self.login.isChecked(),
            "theme": self.theme_box.currentData(),
        }
        values.update(self.recall.values())
        values.update(self.facts.values())
        values.update(self.web.values())
        values.update(self.sync.values())
        return values

    def _collect(self) -> tuple[dict[str, Any], dict[str, str]]:
        """The edited values and the problems found, by field name."""
        problems: dict[str, str] = {}
        values = self._values()
        if not values["model"]:
            problems["model"] = "Enter a model name, for example gemini-3-flash-preview."
        budget = values["max_tool_calls"]
        if budget is None or not 1 <= budget <= 500:
            problems["max_tool_calls"] = "Enter a whole number of tool calls from 1 to 500."
        tokens = values["compact_at_tokens"]
        if tokens is None or not 2_000 <= tokens <= 2_000_000:
            problems["compact_at_tokens"] = "Enter a number of tokens from 2,000 to 2,000,000."
        folder = values["workspace"]
        if folder and not os.path.isdir(os.path.expanduser(folder)):
            problems["workspace"] = f"There is no folder at {folder}."
        keys = self.shortcut.keySequence()
        if keys.isEmpty() or keys.count() != 1:
            problems["quick_ask_shortcut"] = "Press one key combination, like Ctrl+Alt+Space."
        if (sync_problem := self.sync.problem()) is not None:
            problems["sync_url"] = sync_problem
            self.sync.note.setText(sync_problem)
        return values, problems

    def show_problems(self, problems: dict[str, str]) -> None:
        """A message beside each bad field; the others cleared."""
        for name, label in self.errors.items():
            label.show_message(problems.get(name, ""))
        if problems:
            self.status.setText("Nothing was saved: fix the values marked in red.")

    def save(self) -> bool:
        """Validate, save and apply; False (nothing saved) when a value is bad."""
        values, problems = self._collect()
        current = self.settings.effective
        if not problems:
            try:
                Settings.model_validate({**current.model_dump(), **values})
            except ValidationError as exc:
                problems = {str(e["loc"][0]): str(e["msg"]) for e in exc.errors()}
        self.show_problems(problems)
        if problems:
            return False
        if values["start_at_login"] != xdg.autostart_enabled():
            try:
                xdg.set_autostart(values["start_at_login"])
            except OSError as exc:
                self.show_problems(
                    {"start_at_login": f"Could not change the autostart entry: {exc}"}
                )
                return False
        revoked = set(self._revoked_always)
        # Only the fields edited here are written: a setting another process saved while the
        # dialog was open is kept, not put back to the value shown since. (The autostart
        # entry, not the file, says whether Koroku starts at login: always written.)
        edited = {
            k: v for k, v in values.items() if v != self._shown.get(k) or k == "start_at_login"
        }

        def change(stored: Settings) -> dict[str, Any]:
            # Grants are revoked by name, so one granted elsewhere meanwhile is kept.
            kept = [t for t in stored.always_allow if t not in revoked]
            return {**edited, "always_allow": kept}

        try:
            effective = self.settings.update(change)
        except OSError as exc:
            self.status.setText(f"Nothing was saved: {exc}")
            return False
        for tool in self._revoked_session:
            self.policy.revoke(tool)
        self._revoked_session.clear()
        self._revoked_always.clear()
        if effective.theme != current.theme:
            app = QApplication.instance()
            if isinstance(app, QApplication):
                theme.apply(app, effective.theme)
        self._shown = values
        self.status.setText("Saved. The next turn uses the new settings.")
        self.applied.emit(effective)
        return True

    def _save_and_close(self) -> None:
        if self.save():
            self.accept()
