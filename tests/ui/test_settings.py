"""The Settings dialog: validated, saved, applied without a restart (the next turn sees them)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import (
    QAbstractButton,
    QApplication,
    QFormLayout,
    QGroupBox,
    QLabel,
    QLineEdit,
    QScrollArea,
    QWidget,
)
from pytestqt.qtbot import QtBot

from koroku_desktop.app.settings_store import SettingsStore, add_grant
from koroku_desktop.ui.app import Desktop
from koroku_desktop.ui.settings.dialog import SettingsDialog, parse_count
from koroku_desktop.ui.widgets import theme
from tests.fakes.fixtures import TEST_API_KEY
from tests.fakes.gemini_server import FakeGemini
from tests.support.waits import settle
from tests.ui.conftest import run
from tests.ui.helpers import type_and_send
from tests.ui.screenshots import save_screenshot


def _stored(desktop: Desktop) -> dict[str, object]:
    file = desktop.runtime.paths.settings_file
    return json.loads(file.read_text(encoding="utf-8")) if file.exists() else {}


def visible_texts(root: QWidget) -> list[str]:
    """Every text a person could read in `root` (labels, fields, buttons, tooltips)."""
    found = [root.windowTitle(), root.toolTip()]
    for w in root.findChildren(QWidget):
        found.append(w.toolTip())
        if isinstance(w, QLabel | QAbstractButton) or (
            isinstance(w, QLineEdit) and w.echoMode() == QLineEdit.EchoMode.Normal
        ):
            found.append(w.text())
    return found


def test_parse_count_reads_what_people_type() -> None:
    assert parse_count("100,000") == parse_count("100k") == parse_count(" 100 000 ") == 100_000
    assert parse_count("twelve") is None and parse_count("-3") is None


def test_bad_values_get_a_message_and_nothing_is_saved(
    desktop: Desktop, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("KOROKU_WORKSPACE")
    dialog = desktop.show_settings()
    before = _stored(desktop)
    dialog.budget.setText("lots")
    dialog.threshold.setText("10")
    dialog.workspace.setText(str(tmp_path / "no-such-folder"))
    dialog.model_box.setCurrentText("  ")
    dialog.save_button.click()
    assert dialog.isVisible(), "the dialog stays open"
    assert "1 to 500" in dialog.errors["max_tool_calls"].text()
    assert dialog.errors["max_tool_calls"].isVisibleTo(dialog)
    assert "2,000 to 2,000,000" in dialog.errors["compact_at_tokens"].text()
    assert "no folder" in dialog.errors["workspace"].text()
    assert "model name" in dialog.errors["model"].text()
    assert not dialog.errors["theme"].isVisibleTo(dialog)
    assert "Nothing was saved" in dialog.status.text()
    assert _stored(desktop) == before
    assert desktop.runtime.agent.options.max_tool_calls == 15
    # Fixing the values clears the messages and saves.
    dialog.budget.setText("7")
    dialog.threshold.setText("50k")
    dialog.workspace.setText(str(tmp_path))
    dialog.model_box.setCurrentText("gemini-2.5-flash")
    assert dialog.save()
    assert not any(e.isVisibleTo(dialog) for e in dialog.errors.values())
    stored = _stored(desktop)
    assert stored["max_tool_calls"] == 7 and stored["compact_at_tokens"] == 50_000
    assert stored["workspace"] == str(tmp_path) and stored["model"] == "gemini-2.5-flash"
    opts = desktop.runtime.agent.options
    assert (opts.max_tool_calls, opts.compact_at_tokens, opts.workspace) == (7, 50_000, tmp_path)
    assert desktop.window.model_label.text() == "gemini-2.5-flash"


def test_a_changed_tool_budget_is_used_by_the_next_turn(
    desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot
) -> None:
    desktop.runtime.policy.grant("bash", "session")
    dialog = desktop.show_settings()
    assert not dialog.workspace.isEnabled(), "set by KOROKU_WORKSPACE"
    dialog.budget.setText("2")
    dialog.save_button.click()
    assert not dialog.isVisible()
    stored = _stored(desktop)
    assert stored["max_tool_calls"] == 2
    assert stored["workspace"] == "", "the environment's value is not written to the file"
    fake_gemini.endless_calls("bash", {"command": "echo tick"})
    type_and_send(qtbot, desktop.window.input, "loop forever")
    qtbot.waitUntil(lambda: not desktop.bridge.busy, timeout=15000)
    requests = fake_gemini.generate_requests()
    assert [r.has_tools for r in requests] == [True, True, False]
    assert "Do not call any more tools" in requests[-1].system_text


def test_grants_are_listed_and_revoked(desktop: Desktop, qtbot: QtBot) -> None:
    desktop.runtime.policy.grant("write_file", "always")
    desktop.runtime.policy.grant("bash", "session")
    assert _stored(desktop)["always_allow"] == ["write_file"]
    dialog = desktop.show_settings()
    assert dialog.grant_names() == ["write_file", "bash (this session)"]
    dialog.grants.setCurrentRow(0)
    dialog.revoke_button.click()
    dialog.grants.setCurrentRow(0)
    dialog.revoke_button.click()
    assert dialog.grant_names() == []
    assert desktop.runtime.policy.always_granted() == {"write_file"}, "only on Save"
    assert dialog.save()
    assert desktop.runtime.policy.always_granted() == set()
    assert desktop.runtime.policy.session_granted() == set()
    assert _stored(desktop)["always_allow"] == []


def test_saving_keeps_a_grant_made_by_another_process_and_writes_no_override(
    desktop: Desktop, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KOROKU_MODEL", "gemini-from-env")
    desktop.runtime.policy.grant("write_file", "always")
    dialog = desktop.show_settings()
    assert not dialog.model_box.isEnabled()
    # Another process (a `koroku chat` in a terminal) grants a tool while the dialog is open.
    SettingsStore.open(desktop.runtime.paths).update(add_grant("edit_file"))
    dialog.grants.setCurrentRow(0)
    dialog.revoke_button.click()  # write_file
    dialog.budget.setText("9")
    assert dialog.save()
    stored = _stored(desktop)
    assert stored["always_allow"] == ["edit_file"] and stored["max_tool_calls"] == 9
    assert "gemini-from-env" not in desktop.runtime.paths.settings_file.read_text("utf-8")
    assert desktop.runtime.policy.always_granted() == {"edit_file"}
    assert desktop.runtime.agent.options.model == "gemini-from-env"


def test_saving_keeps_a_setting_another_process_changed_while_open(
    desktop: Desktop, qtbot: QtBot
) -> None:
    dialog = desktop.show_settings()
    # Another process saves its own Settings while this dialog shows the old values.
    SettingsStore.open(desktop.runtime.paths).update(
        {"model": "gemini-2.5-pro", "google_search": True, "max_tool_calls": 40}
    )
    dialog.budget.setText("9")  # edited here too: this dialog's value wins
    assert dialog.save()
    stored = _stored(desktop)
    assert stored["model"] == "gemini-2.5-pro" and stored["google_search"] is True
    assert stored["max_tool_calls"] == 9
    assert desktop.runtime.agent.options.model == "gemini-2.5-pro"


def test_the_forms_put_labels_above_their_fields_only_while_narrow(
    desktop: Desktop, qapp: QApplication
) -> None:
    dialog = desktop.show_settings()
    forms = [
        layout
        for group in dialog.findChildren(QGroupBox)
        if isinstance(layout := group.layout(), QFormLayout)
    ]
    assert len(forms) >= 4  # Agent, Desktop, Memory & thinking, Sync
    scroll = dialog.findChild(QScrollArea)
    assert scroll is not None
    wrap = QFormLayout.RowWrapPolicy
    for width, policy in (
        (900, wrap.WrapLongRows),
        (400, wrap.WrapAllRows),
        (900, wrap.WrapLongRows),
    ):
        dialog.resize(width, 760)
        qapp.processEvents()
        assert [f.rowWrapPolicy() for f in forms] == [policy] * len(forms), width
        assert scroll.horizontalScrollBar().maximum() == 0, width
    dialog.close()


def test_theme_and_shortcut_apply_live(desktop: Desktop, qtbot: QtBot) -> None:
    dialog = desktop.show_settings()
    dialog.theme_box.setCurrentIndex(2)  # dark
    dialog.shortcut.setKeySequence(QKeySequence("Ctrl+Alt+K"))
    assert dialog.save()
    assert theme.current().dark
    app = QApplication.instance()
    assert isinstance(app, QApplication) and theme.DARK.window in app.styleSheet()
    assert _stored(desktop)["quick_ask_shortcut"] == "Ctrl+Alt+K"
    assert "koroku quick-ask" in " ".join(visible_texts(dialog))
    dialog = desktop.show_settings()
    dialog.shortcut.clear()
    assert not dialog.save()
    assert "key combination" in dialog.errors["quick_ask_shortcut"].text()


def test_start_at_login_writes_and_removes_the_autostart_entry(
    desktop: Desktop, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    entry = tmp_path / "config" / "autostart" / "koroku.desktop"
    dialog = desktop.show_settings()
    assert not dialog.login.isChecked()
    dialog.login.setChecked(True)
    assert dialog.save()
    text = entry.read_text(encoding="utf-8")
    assert "[Desktop Entry]" in text and "Exec=" in text and "Name=Koroku" in text
    assert _stored(desktop)["start_at_login"] is True
    dialog = desktop.show_settings()
    assert dialog.login.isChecked()
    dialog.login.setChecked(False)
    assert dialog.save()
    assert not entry.exists()


def test_key_source_without_a_keyring_and_test_connection(
    desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot
) -> None:
    dialog = desktop.show_settings()
    key = dialog.key
    assert "GEMINI_API_KEY" in key.source.text() and "environment" in key.source.text()
    assert key.keyring_note.isVisibleTo(dialog) and "GEMINI_API_KEY" in key.keyring_note.text()
    assert not key.field.isEnabled(), "no keyring: nowhere safe to store a key"
    message = run(qtbot, key.test())
    assert message.startswith("Connected to Gemini"), message
    assert key.result.text() == message
    assert [r.method for r in fake_gemini.requests][-1] == "countTokens"
    fake_gemini.fail(400, message="API key not valid. Please pass a valid API key.")
    message = run(qtbot, key.test())
    assert message.startswith("The connection failed"), message
    assert all(TEST_API_KEY not in t for t in visible_texts(dialog))


def test_screenshot_of_the_settings_dialog_with_a_problem_shown(
    desktop: Desktop, qtbot: QtBot
) -> None:
    theme.apply(desktop.app, "light")
    rt = desktop.runtime
    dialog = SettingsDialog(rt.settings_store, rt.policy, rt.model)
    qtbot.addWidget(dialog)
    dialog.resize(640, 800)
    dialog.show()
    dialog.budget.setText("0")
    assert not dialog.save()
    settle()
    assert dialog.errors["max_tool_calls"].isVisible() and dialog.key.isVisible()
    save_screenshot(dialog, "settings")


def test_disabled_fields_look_disabled_and_save_is_the_one_model(
    desktop: Desktop, qtbot: QtBot, qapp: QApplication
) -> None:
    from PySide6.QtGui import QImage

    dialog = desktop.show_settings()
    assert "press Save" in dialog.status.text() and "Cancel" in dialog.status.text()
    for mode in ("light", "dark"):
        th = theme.apply(qapp, mode)
        qapp.processEvents()
        off: QImage = dialog.workspace.grab().toImage()  # set by KOROKU_WORKSPACE
        on: QImage = dialog.budget.grab().toImage()
        assert off.pixelColor(6, off.height() // 2) == th.color("hover"), mode
        assert on.pixelColor(6, on.height() // 2) != th.color("hover"), mode
        note = dialog.key.keyring_note.grab().toImage()  # no keyring in the tests
        assert note.pixelColor(note.width() // 2, 3) == th.color("warn_soft"), mode
        save_screenshot(dialog, f"settings-{mode}")
    theme.apply(qapp, "light")
    dialog.close()
