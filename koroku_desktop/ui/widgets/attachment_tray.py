"""AttachmentTray: files waiting to go with the next message, as removable chips.

Used by the chat window and the quick-ask popup. Files come from the attach button's dialog,
a drop, a paste (an image on the clipboard, or copied files) or `add_bytes` (a screenshot);
each is checked from its content (`check_attachment`) at once, so a refused file is
reported right away and never stored. Nothing is kept until the message is sent.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import (
    QBuffer,
    QByteArray,
    QEvent,
    QIODevice,
    QMimeData,
    QSize,
    Qt,
    QTime,
    Signal,
)
from PySide6.QtGui import QImage, QPixmap, QResizeEvent
from PySide6.QtWidgets import (
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from koroku_desktop.app.runtime import read_attachment_file
from koroku_desktop.domain.attachment import (
    AttachmentRefused,
    PendingAttachment,
    check_attachment,
    human_size,
    kind_label,
)
from koroku_desktop.ui.widgets import theme
from koroku_desktop.ui.widgets.icons import tinted_icon

log = logging.getLogger(__name__)

THUMB = 34
FILE_FILTER = (
    "Images, PDF, text, audio (*.png *.jpg *.jpeg *.webp *.gif *.heic *.heif *.pdf *.txt *.md "
    "*.csv *.json *.py *.js *.ts *.html *.css *.xml *.yaml *.yml *.toml *.rs *.go *.c *.h *.cpp "
    "*.java *.sh *.wav *.mp3 *.ogg *.flac *.aac *.aiff);;All files (*)"
)

Dropped = tuple[bytes, str] | Path
"""One thing a drop or paste carries: image bytes and a name, or a local file."""


def image_png(image: QImage) -> bytes:
    """A clipboard image as PNG bytes."""
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")  # type: ignore[call-overload]
    buffer.close()
    return bytes(data.data())


def mime_attachments(mime: QMimeData) -> list[Dropped]:
    """What a drop or paste would attach: local files first, else an image (empty: text).

    Copied text that also carries a picture of itself (an office suite's copy) stays text.
    Never raises (it runs inside Qt's paste and drop handlers).
    """
    try:
        return _mime_attachments(mime)
    except Exception:  # whatever was pasted, the app goes on
        log.exception("could not read the pasted or dropped data")
        return []


def _mime_attachments(mime: QMimeData) -> list[Dropped]:
    files = [Path(url.toLocalFile()) for url in mime.urls() if url.isLocalFile()]
    if files:
        return list(files)
    if mime.hasImage() and not mime.text().strip():
        raw = bytes(mime.data("image/png").data()) if mime.hasFormat("image/png") else b""
        if not raw:
            image = mime.imageData()
            raw = image_png(image) if isinstance(image, QImage) and not image.isNull() else b""
        if raw:
            return [(raw, f"Pasted image {QTime.currentTime().toString('HH.mm.ss')}.png")]
    return []


def badge_text(mime: str) -> str:
    """The short word on a file's badge: PDF, TXT, MP3..."""
    if mime == "text/plain":
        return "TXT"
    return mime.split("/")[-1].upper()[:4]


class AttachmentChip(QFrame):
    """One pending attachment: a thumbnail (or a type badge), its name and size, and ×."""

    remove_requested = Signal(object)  # this chip

    def __init__(self, pending: PendingAttachment, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.pending = pending
        self.setObjectName("AttachmentChip")
        row = QHBoxLayout(self)
        row.setContentsMargins(4, 4, 4, 4)
        row.setSpacing(8)
        self.preview = QLabel()
        self.preview.setObjectName("ChipPreview")
        self.preview.setFixedSize(THUMB, THUMB)
        self.preview.setAlignment(Qt.AlignmentFlag.AlignCenter)
        pixmap = QPixmap()
        if pending.mime_type.startswith("image/") and pixmap.loadFromData(pending.data):
            self.preview.setPixmap(
                pixmap.scaled(
                    QSize(THUMB, THUMB),
                    Qt.AspectRatioMode.KeepAspectRatioByExpanding,
                    Qt.TransformationMode.SmoothTransformation,
                ).copy(0, 0, THUMB, THUMB)
            )
        else:
            self.preview.setText(badge_text(pending.mime_type))
            self.preview.setProperty("badge", True)
        row.addWidget(self.preview)
        words = QVBoxLayout()
        words.setSpacing(0)
        name = QLabel(self._elided(pending.name))
        name.setObjectName("ChipName")
        about = f"{kind_label(pending.mime_type)} · {human_size(pending.size)}"
        detail = QLabel(f"MCP {pending.server} · {about}" if pending.server else about)
        detail.setObjectName("ChipDetail")
        words.addWidget(name)
        words.addWidget(detail)
        row.addLayout(words)
        self.remove_button = QToolButton()
        self.remove_button.setObjectName("ChipRemove")
        self.remove_button.setText("×")
        self.remove_button.setToolTip(f"Remove {pending.name}")
        self.remove_button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.remove_button.clicked.connect(lambda: self.remove_requested.emit(self))
        row.addWidget(self.remove_button, 0, Qt.AlignmentFlag.AlignTop)
        where = f"\n{pending.uri} (MCP server {pending.server!r})" if pending.uri else ""
        self.setToolTip(f"{pending.name}{where}\n{pending.mime_type}, {human_size(pending.size)}")

    @staticmethod
    def _elided(name: str, limit: int = 26) -> str:
        return name if len(name) <= limit else name[: limit - 9] + "…" + name[-8:]


class AttachmentTray(QWidget):
    """The chips above a message box, scrolling sideways when many; hidden while empty."""

    changed = Signal()
    refused = Signal(str)  # why a file was not attached, fit to show as is

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("AttachmentTray")
        outer = QHBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        self._scroll = QScrollArea()
        self._scroll.setObjectName("AttachmentScroll")
        self._scroll.setWidgetResizable(True)
        self._scroll.setFrameShape(QFrame.Shape.NoFrame)
        self._scroll.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        inner = QWidget()
        inner.setObjectName("AttachmentRow")
        self._row = QHBoxLayout(inner)
        self._row.setContentsMargins(0, 0, 0, 0)
        self._row.setSpacing(6)
        self._row.addStretch(1)
        self._scroll.setWidget(inner)
        self._inner = inner
        outer.addWidget(self._scroll)
        self.chips: list[AttachmentChip] = []
        self.setVisible(False)

    def _fit_height(self) -> None:
        """As tall as a chip, plus the scroll bar when the chips are wider than the tray."""
        hint = self._inner.sizeHint()
        height = hint.height()
        if hint.width() > self._scroll.viewport().width():
            height += self._scroll.horizontalScrollBar().sizeHint().height()
        self._scroll.setFixedHeight(height)

    def resizeEvent(self, event: QResizeEvent) -> None:
        """The scroll bar comes and goes with the width."""
        super().resizeEvent(event)
        self._fit_height()

    @property
    def pending(self) -> list[PendingAttachment]:
        """The attachments waiting, in the order they were added."""
        return [chip.pending for chip in self.chips]

    def add_bytes(self, data: bytes, name: str) -> bool:
        """Check and add bytes (a pasted image, a screenshot); False (and `refused`) if not."""
        return self._add_checked(lambda: check_attachment(data, name))

    def add_path(self, path: Path) -> bool:
        """Read, check and add a local file; False (and `refused`) if it cannot be attached."""
        return self._add_checked(lambda: read_attachment_file(path))

    def _add_checked(self, check: Callable[[], PendingAttachment]) -> bool:
        """Add what `check` gives; False, with its reason sent by `refused`, if it refuses."""
        try:
            pending = check()
        except AttachmentRefused as exc:
            self.refused.emit(str(exc))
            return False
        self._add(pending)
        return True

    def add_dropped(self, items: list[Dropped]) -> int:
        """Add what a drop or paste carried; how many were accepted."""
        added = 0
        for item in items:
            ok = self.add_path(item) if isinstance(item, Path) else self.add_bytes(*item)
            added += int(ok)
        return added

    def add_pending(self, pending: PendingAttachment) -> None:
        """Add an attachment read elsewhere (an MCP resource), already checked."""
        self._add(pending)

    def _add(self, pending: PendingAttachment) -> None:
        if any(p.data == pending.data and p.name == pending.name for p in self.pending):
            return  # the same file twice is one attachment
        chip = AttachmentChip(pending, self)
        chip.remove_requested.connect(self.remove)
        self.chips.append(chip)
        self._row.insertWidget(len(self.chips) - 1, chip)
        self.setVisible(True)
        self._fit_height()
        self.changed.emit()

    def remove(self, chip: AttachmentChip) -> None:
        """Drop one chip (its × was clicked)."""
        if chip in self.chips:
            self.chips.remove(chip)
            chip.setParent(None)
            chip.deleteLater()
            self.setVisible(bool(self.chips))
            self._fit_height()
            self.changed.emit()

    def take(self) -> list[PendingAttachment]:
        """The pending attachments, emptying the tray (the message is being sent)."""
        pending = self.pending
        for chip in list(self.chips):
            self.remove(chip)
        return pending

    def choose_files(self, parent: QWidget, folder: Path | None = None) -> QFileDialog:
        """Open a file dialog (not blocking) in `folder` (the workspace); the chosen files are
        added when it closes."""
        dialog = QFileDialog(parent, "Attach files", str(folder) if folder else "")
        dialog.resize(820, 540)
        dialog.setFileMode(QFileDialog.FileMode.ExistingFiles)
        dialog.setNameFilter(FILE_FILTER)
        dialog.filesSelected.connect(lambda names: [self.add_path(Path(n)) for n in names])
        dialog.open()
        return dialog


class AttachButton(QToolButton):
    """The paper-clip button beside a message box, in the theme's muted colour."""

    def __init__(self, tooltip: str = "Attach files (or drop or paste them)") -> None:
        super().__init__()
        self.setObjectName("AttachButton")
        self.setText("Attach")
        self.setAccessibleName("Attach files")
        self.setToolTip(tooltip)
        self.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonIconOnly)
        self.setIconSize(QSize(18, 18))
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setAutoRaise(True)
        self._paint_icon()

    def _paint_icon(self) -> None:
        self.setIcon(tinted_icon("attach", theme.current().muted))

    def changeEvent(self, event: QEvent) -> None:
        """Repaint the icon in the new theme's colours."""
        if event.type() == QEvent.Type.PaletteChange:
            self._paint_icon()
        super().changeEvent(event)


def attach_button() -> AttachButton:
    """The paper-clip button beside a message box."""
    return AttachButton()
