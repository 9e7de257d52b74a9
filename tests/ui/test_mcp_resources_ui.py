"""MCP resources in the chat window's composer, against server-everything: the attach button
offers them, the picker is keyboard first, a resource waits as a chip and is sent from the
blob store (as text, headed by its URI); templates ask for their variables."""

from __future__ import annotations

import base64

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLineEdit, QMenu
from pytestqt.qtbot import QtBot

from koroku_desktop.domain.events import MessageEvent
from koroku_desktop.domain.parts import AttachmentPart
from koroku_desktop.ui.app import Desktop
from koroku_desktop.ui.chat.mcp_resources import McpResourceAttacher
from koroku_desktop.ui.chat.resource_picker import ResourcePicker
from tests.fakes.gemini_server import FakeGemini
from tests.ui.conftest import run
from tests.ui.helpers import type_and_send
from tests.ui.screenshots import save_themed

DOC = "demo://resource/static/document/architecture.md"


def _open_picker(desk: Desktop, qtbot: QtBot) -> ResourcePicker:
    """Press the attach button, then choose *MCP resource…* with the keyboard."""
    attacher = desk.mcp_resources
    assert isinstance(attacher, McpResourceAttacher)
    qtbot.mouseClick(desk.window.attach_button, Qt.MouseButton.LeftButton)
    menu = attacher.menu
    assert isinstance(menu, QMenu)
    qtbot.waitUntil(menu.isVisible)
    assert [a.text() for a in menu.actions()] == ["Files…", "MCP resource…"]
    qtbot.keyClick(menu, Qt.Key.Key_Down)
    qtbot.keyClick(menu, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: attacher.picker is not None and attacher.picker.isVisible())
    assert attacher.picker is not None
    return attacher.picker


def _user_parts(desk: Desktop) -> list[AttachmentPart]:
    return [
        p
        for e in desk.runtime.log.entries("default")
        if isinstance(e.event, MessageEvent) and e.event.role == "user"
        for p in e.event.parts
        if isinstance(p, AttachmentPart)
    ]


def _replies(desk: Desktop) -> str:
    return " ".join(i.text for i in desk.window.model.items() if i.kind == "model")


def _sent_texts(fake: FakeGemini) -> list[str]:
    request = fake.generate_requests()[-1]
    return [p["text"] for c in request.contents for p in c.get("parts", []) if "text" in p]


def test_a_resource_is_picked_by_keyboard_and_sent_as_text(
    ev_desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot
) -> None:
    window = ev_desktop.window
    picker = _open_picker(ev_desktop, qtbot)
    qtbot.waitUntil(picker.search.hasFocus)
    qtbot.keyClicks(picker.search, "architecture")
    assert picker.list.count() == 1
    qtbot.keyClick(picker.search, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: len(window.tray.chips) == 1, timeout=30000)
    pending = window.tray.pending[0]
    assert (pending.name, pending.server, pending.uri) == ("architecture.md", "ev", DOC)
    assert window.input.hasFocus()
    fake_gemini.reply_text("Read it.")
    type_and_send(qtbot, window.input, "What does it say?")
    qtbot.waitUntil(lambda: len(fake_gemini.generate_requests()) == 1, timeout=30000)
    (part,) = _user_parts(ev_desktop)
    assert (part.server, part.uri, part.mime_type) == ("ev", DOC, "text/markdown")
    store = ev_desktop.runtime.attachments
    assert store is not None and store.read(part.sha256) == pending.data  # content-addressed
    (card,) = [i for i in window.model.items() if i.kind == "attachment"]
    assert card.args["server"] == "ev"  # the card says "MCP ev · Text · …"
    head = f"[MCP resource {DOC} of server 'ev', text/markdown]\n"
    assert head + pending.data.decode() in _sent_texts(fake_gemini)


def test_a_template_asks_for_its_variables_and_esc_goes_back(
    ev_desktop: Desktop, qtbot: QtBot
) -> None:
    window = ev_desktop.window
    picker = _open_picker(ev_desktop, qtbot)
    qtbot.keyClicks(picker.search, "dynamic text")
    qtbot.keyClick(picker.search, Qt.Key.Key_Return)
    field = picker.findChild(QLineEdit, "TemplateField_resourceId")
    assert isinstance(field, QLineEdit)
    qtbot.waitUntil(field.hasFocus)
    qtbot.keyClick(field, Qt.Key.Key_Escape)  # back to the list, the picker stays
    assert picker.isVisible() and picker.search.hasFocus()
    assert picker.findChild(QLineEdit, "TemplateField_resourceId") is None
    qtbot.keyClick(picker.search, Qt.Key.Key_Return)
    field = picker.findChild(QLineEdit, "TemplateField_resourceId")
    assert isinstance(field, QLineEdit)
    qtbot.waitUntil(field.hasFocus)
    qtbot.keyClicks(field, "5")
    assert picker.preview.text() == "URI: demo://resource/dynamic/text/5"
    qtbot.keyClick(field, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: len(window.tray.chips) == 1, timeout=30000)
    pending = window.tray.pending[0]
    assert pending.name == "Dynamic Text Resource — 5"
    assert pending.data.decode().startswith("Resource 5: This is a plaintext resource")


def test_esc_closes_the_picker_and_a_failed_read_is_said(ev_desktop: Desktop, qtbot: QtBot) -> None:
    window = ev_desktop.window
    picker = _open_picker(ev_desktop, qtbot)
    qtbot.keyClick(picker.search, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: not picker.isVisible())
    attacher = ev_desktop.mcp_resources
    (info,) = [r for r in ev_desktop.runtime.mcp.resources() if r.template][:1]  # type: ignore[union-attr]
    attacher.attach(info, "demo://resource/dynamic/text/zero")
    qtbot.waitUntil(lambda: window.notice.text().startswith("MCP server 'ev': "), timeout=30000)
    assert not window.tray.chips


def test_screenshots_of_the_picker_and_a_resource_chip(
    ev_desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot
) -> None:
    window = ev_desktop.window
    picker = _open_picker(ev_desktop, qtbot)
    save_themed(picker, "mcp-resource-picker", [(400, 460), (560, 460)])
    qtbot.keyClicks(picker.search, "dynamic text")
    qtbot.keyClick(picker.search, Qt.Key.Key_Return)
    save_themed(picker, "mcp-resource-template", [(400, 460)])
    field = picker.findChild(QLineEdit, "TemplateField_resourceId")
    assert isinstance(field, QLineEdit)
    qtbot.keyClicks(field, "2")
    qtbot.keyClick(field, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: len(window.tray.chips) == 1, timeout=30000)
    save_themed(window, "mcp-resource-chip", [(400, 760), (900, 760)])
    fake_gemini.reply_text("It is resource 2, made a moment ago.")
    type_and_send(qtbot, window.input, "What is this?")
    qtbot.waitUntil(lambda: "made a moment ago" in _replies(ev_desktop), timeout=30000)
    save_themed(window, "mcp-resource-sent", [(400, 760), (900, 760)])


def _function(desk: Desktop, tool: str) -> str:
    manager = desk.runtime.mcp
    assert manager is not None
    return next(s.name for s in manager.specs() if s.name.endswith(tool))


def test_the_open_picker_follows_a_list_change(ev_desktop: Desktop, qtbot: QtBot) -> None:
    manager = ev_desktop.runtime.mcp
    assert manager is not None
    picker = _open_picker(ev_desktop, qtbot)
    qtbot.keyClicks(picker.search, "session")
    assert picker.list.count() == 0
    data = "data:text/plain;base64," + base64.b64encode(b"hello").decode()
    args = {"name": "hello.txt.gz", "data": data}
    run(qtbot, manager.call(_function(ev_desktop, "gzip-file-as-resource"), args), 60000)
    qtbot.waitUntil(lambda: picker.list.count() == 1, timeout=60000)
    assert "demo://resource/session/hello.txt.gz" in picker.list.item(0).text()


def test_a_sent_resource_that_changes_is_said_once_in_the_status_bar(
    ev_desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot
) -> None:
    window = ev_desktop.window
    picker = _open_picker(ev_desktop, qtbot)
    qtbot.keyClicks(picker.search, "architecture")
    qtbot.keyClick(picker.search, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: len(window.tray.chips) == 1, timeout=30000)
    attacher = ev_desktop.mcp_resources
    assert not attacher.watched  # attached, not sent: nothing to follow yet
    fake_gemini.reply_text("Noted.")
    type_and_send(qtbot, window.input, "Keep an eye on this.")
    qtbot.waitUntil(lambda: ("ev", DOC) in attacher.watched, timeout=30000)  # subscribed
    manager = ev_desktop.runtime.mcp
    assert manager is not None
    run(qtbot, manager.call(_function(ev_desktop, "toggle-subscriber-updates"), {}), 60000)
    said = f"⚠ MCP ev: {DOC} changed since it was attached"
    qtbot.waitUntil(lambda: window.status_bar.currentMessage() == said, timeout=60000)
