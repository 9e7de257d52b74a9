"""Attaching files in the chat window and the quick-ask popup: real widgets, the real app.

Drop, paste, the attach button, removing a chip, refusals, sending (the fake server gets the
bytes), the thumbnail and file card in the conversation, opening a copy, and screenshots
(saved in tests/screenshots/; the ones in resources/screenshots/ are copied from there).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import (
    QColor,
    QDragEnterEvent,
    QDropEvent,
    QGuiApplication,
    QImage,
    QTextDocument,
)
from PySide6.QtWidgets import QApplication, QFileDialog
from pytestqt.qtbot import QtBot

from koroku_desktop.domain.attachment import check_attachment
from koroku_desktop.domain.events import MessageEvent, StoredEvent
from koroku_desktop.domain.parts import Part, TextPart
from koroku_desktop.ui.app import Desktop
from koroku_desktop.ui.chat.attachment_rows import THUMBNAILS
from koroku_desktop.ui.widgets import theme
from tests.fakes.gemini_replies import decode_b64
from tests.fakes.gemini_server import FakeGemini
from tests.support.waits import settle
from tests.ui.helpers import click_row_action, rows, shown_popup, type_and_send
from tests.ui.screenshots import save_screenshot

PDF = b"%PDF-1.5\n" + b"quarterly figures " * 400


def picture(width: int = 320, height: int = 200) -> QImage:
    """A small picture with a gradient and a frame (not a flat colour)."""
    image = QImage(width, height, QImage.Format.Format_RGB32)
    for y in range(height):
        for x in range(width):
            image.setPixelColor(x, y, QColor(60 + x * 150 // width, 90 + y * 120 // height, 200))
    return image


def png_bytes(image: QImage) -> bytes:
    from koroku_desktop.ui.widgets.attachment_tray import image_png

    return image_png(image)


def inline_parts(fake: FakeGemini) -> list[tuple[str, bytes]]:
    out = []
    for content in fake.generate_requests()[-1].contents:
        for part in content["parts"]:
            data = part.get("inlineData")
            if data:
                out.append(
                    (data.get("mimeType") or data.get("mime_type"), decode_b64(data["data"]))
                )
    return out


def drop(widget: object, mime: QMimeData) -> None:
    from PySide6.QtWidgets import QWidget

    assert isinstance(widget, QWidget)
    enter = QDragEnterEvent(
        QPoint(40, 40),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    QApplication.sendEvent(widget, enter)
    assert enter.isAccepted()
    event = QDropEvent(
        QPointF(40, 40),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    QApplication.sendEvent(widget, event)


def test_a_pasted_image_becomes_a_chip_and_goes_with_the_message(
    desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot
) -> None:
    window = desktop.window
    image = picture()
    QGuiApplication.clipboard().setImage(image)
    window.input.setFocus()
    qtbot.keyClick(window.input, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
    assert len(window.tray.chips) == 1 and window.tray.isVisible()
    pending = window.tray.pending[0]
    assert pending.mime_type == "image/png" and pending.name.startswith("Pasted image")
    assert window.input.toPlainText() == ""  # attached, not pasted as text
    fake_gemini.reply_text("A gradient.")
    type_and_send(qtbot, window.input, "what is this?")
    qtbot.waitUntil(lambda: not desktop.bridge.busy and bool(rows(window.model, "model")))
    assert inline_parts(fake_gemini) == [("image/png", pending.data)]
    assert not window.tray.chips and not window.tray.isVisible()
    (row,) = rows(window.model, "attachment")
    assert row.tool == "user" and row.args["sha256"] and row.args["mime_type"] == "image/png"
    thumb = THUMBNAILS.pixmap(str(row.args["sha256"]))
    assert thumb is not None and thumb.width() > 100


def test_ctrl_v_in_the_conversation_attaches_the_clipboard_image(
    desktop: Desktop, qtbot: QtBot
) -> None:
    window = desktop.window
    QGuiApplication.clipboard().setImage(picture(40, 30))
    window.view.setFocus()
    qtbot.keyClick(window.view, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
    assert [p.mime_type for p in window.tray.pending] == ["image/png"]
    assert window.input.hasFocus()


def test_dropped_files_become_chips_and_a_chip_can_be_removed(
    desktop: Desktop, qtbot: QtBot, tmp_path: Path
) -> None:
    window = desktop.window
    pdf = tmp_path / "report.pdf"
    pdf.write_bytes(PDF)
    notes = tmp_path / "notes.py"
    notes.write_text("print('hi')\n")
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(pdf)), QUrl.fromLocalFile(str(notes))])
    drop(window, mime)
    assert [p.name for p in window.tray.pending] == ["report.pdf", "notes.py"]
    assert [p.mime_type for p in window.tray.pending] == ["application/pdf", "text/plain"]
    # Many files scroll sideways rather than widening the window.
    width = window.width()
    for n in range(8):
        window.attach_bytes(f"note {n}\n".encode(), f"a rather long file name {n}.txt")
    QApplication.processEvents()
    assert window.width() == width and len(window.tray.chips) == 10
    for chip in window.tray.chips[2:]:
        window.tray.remove(chip)
    qtbot.mouseClick(window.tray.chips[0].remove_button, Qt.MouseButton.LeftButton)
    assert [p.name for p in window.tray.pending] == ["notes.py"]
    qtbot.mouseClick(window.tray.chips[0].remove_button, Qt.MouseButton.LeftButton)
    assert window.tray.pending == [] and not window.tray.isVisible()
    assert not window.input.allow_empty_submit


def test_an_unsupported_or_missing_file_is_refused_with_a_hint(
    desktop: Desktop, tmp_path: Path
) -> None:
    window = desktop.window
    binary = tmp_path / "app.bin"
    binary.write_bytes(b"\x7fELF" + bytes(100))
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(binary)), QUrl.fromLocalFile(str(tmp_path / "gone.png"))])
    drop(window, mime)
    assert window.tray.pending == []
    hint = window.notice.text()
    assert "app.bin is not a kind of file Gemini can read" in hint
    assert "gone.png: no such file" in hint


def test_the_attach_button_opens_a_dialog_whose_files_become_chips(
    desktop: Desktop, qtbot: QtBot, tmp_path: Path
) -> None:
    window = desktop.window
    pdf = tmp_path / "paper.pdf"
    pdf.write_bytes(PDF)
    qtbot.mouseClick(window.attach_button, Qt.MouseButton.LeftButton)
    dialog = window.findChildren(QFileDialog)[-1]
    qtbot.waitUntil(dialog.isVisible)
    dialog.setDirectory(str(tmp_path))
    dialog.selectFile(str(pdf))
    dialog.accept()
    qtbot.waitUntil(lambda: bool(window.tray.chips))
    assert [p.name for p in window.tray.pending] == ["paper.pdf"]


def test_only_attachments_can_be_sent_and_a_file_card_opens_a_copy(
    desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot
) -> None:
    window = desktop.window
    opened: list[QUrl] = []
    window.open_url = opened.append  # type: ignore[assignment,method-assign]
    window.attach_bytes(PDF, "figures.pdf")
    fake_gemini.reply_text("Figures read.")
    window.input.setFocus()
    qtbot.keyClick(window.input, Qt.Key.Key_Return)  # no text: the file alone is sent
    qtbot.waitUntil(lambda: not desktop.bridge.busy and bool(rows(window.model, "model")))
    assert inline_parts(fake_gemini) == [("application/pdf", PDF)]
    (card,) = rows(window.model, "attachment")
    assert card.args["name"] == "figures.pdf"
    click_row_action(qtbot, window.view, card, "file:")
    (url,) = opened
    path = Path(url.toLocalFile())
    assert path.name == "figures.pdf" and path.read_bytes() == PDF


def test_the_popup_takes_a_pasted_image_and_attach_bytes(
    desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot
) -> None:
    popup = shown_popup(desktop, qtbot)
    popup.pin_button.setChecked(True)
    shot = png_bytes(picture(100, 80))
    popup.attach_bytes(shot, "screen.png")
    popup.attach_bytes(b"\x00\x01binary", "junk.bin")
    assert [p.name for p in popup.tray.pending] == ["screen.png"]
    assert "junk.bin" in popup.tool_label.text()
    popup.input.setPlainText("What is on my screen?")
    settle()
    assert popup.width() < 700  # the long refusal wraps instead of widening the popup
    save_screenshot(popup, "quick-ask-attachments-light")  # same picture every run
    popup.input.clear()
    QGuiApplication.clipboard().setImage(picture(64, 48))
    popup.input.setFocus()
    qtbot.keyClick(popup.input, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
    assert len(popup.tray.pending) == 2 and popup.tray.pending[1].name.startswith("Pasted")
    fake_gemini.reply_text("Two pictures.")
    type_and_send(qtbot, popup.input, "compare")
    qtbot.waitUntil(lambda: "Two pictures" in popup.answer_text(), timeout=10000)
    sent = inline_parts(fake_gemini)
    assert [m for m, _ in sent] == ["image/png", "image/png"] and sent[0][1] == shot
    assert "(with screen.png, Pasted image" in popup.question_label.text()


def _history(desktop: Desktop) -> list[StoredEvent]:
    store = desktop.bridge.attachments
    assert store is not None
    shot = store.keep(check_attachment(png_bytes(picture(480, 300)), "dashboard.png"))
    pdf = store.keep(check_attachment(PDF, "Q3 report.pdf"))
    parts: list[Part] = [shot, pdf, TextPart(text="What stands out in these two?")]
    answer = "The dashboard shows a **steady rise**; the report confirms Q3 revenue grew 12%."
    return [
        StoredEvent(1, "default", 0.0, MessageEvent(role="user", origin="person", parts=parts)),
        StoredEvent(2, "default", 0.0, MessageEvent(role="model", parts=[TextPart(text=answer)])),
    ]


@pytest.mark.parametrize("mode", ["light", "dark"])
def test_screenshots_of_chips_and_thumbnails(
    desktop: Desktop, qtbot: QtBot, tmp_path: Path, mode: str
) -> None:
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    theme.apply(app, mode)
    window = desktop.window
    if desktop.welcome is not None:
        desktop.welcome.ok_button.click()
    window.resize(900, 760)
    window.set_history(_history(desktop))  # type: ignore[arg-type]
    window.attach_bytes(png_bytes(picture(200, 120)), "screenshot.png")
    window.attach_bytes(b"# Notes\n\n- ship it\n", "notes.md")
    window.attach_bytes(b"ID3\x03\x00\x00\x00\x00\x00\x00" + bytes(2000), "memo.mp3")
    window.input.setPlainText("And compare with this week")
    settle()
    window.view.scroll_to_bottom()
    settle()
    assert len(rows(window.model, "attachment")) == 2 and len(window.tray.chips) == 3
    assert all(chip.isVisible() for chip in window.tray.chips)
    save_screenshot(window, f"chat-attachments-{mode}")
    window.tray.take()
    theme.apply(app, "light")


def test_the_viewer_shows_a_thumbnail_and_opens_a_file(desktop: Desktop, qtbot: QtBot) -> None:
    from koroku_desktop.ui.viewer.detail_view import EntryDetail

    history = _history(desktop)
    detail = EntryDetail()
    qtbot.addWidget(detail)
    detail.resize(700, 600)
    detail.show_entry(history[0])
    html = detail.readable.toHtml()
    shot, pdf = (p for p in history[0].event.parts[:2])  # type: ignore[union-attr]
    assert f'src="attachment:{shot.sha256}"' in html  # type: ignore[union-attr]
    image = detail.readable.loadResource(
        QTextDocument.ResourceType.ImageResource.value,
        QUrl(f"attachment:{shot.sha256}"),  # type: ignore[union-attr]
    )
    assert isinstance(image, QImage) and image.width() == 260
    assert "Q3 report.pdf (PDF, 7.2 KB)" in detail.readable.toPlainText()
    detail.show()
    qtbot.waitExposed(detail)
    save_screenshot(detail, "viewer-attachments-light")
    opened: list[QUrl] = []
    detail.readable.open_url = opened.append  # type: ignore[assignment,method-assign]
    detail.readable.anchorClicked.emit(QUrl(f"attachment:{pdf.sha256}"))  # type: ignore[union-attr]
    (url,) = opened
    assert Path(url.toLocalFile()).name == "Q3 report.pdf"
    assert Path(url.toLocalFile()).read_bytes() == PDF
