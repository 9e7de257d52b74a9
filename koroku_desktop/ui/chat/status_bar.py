"""ChatStatusBar: the chat window's status bar — the model's name, the sync state, the
context meter (its tooltip says how much Gemini served from its prompt cache) and passing
messages (a status, a notice, "waiting for the turn running in the terminal").

Split out of the chat window so the window only lays out and routes; the bar follows the
bridge's signals itself (`follow`).
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QProgressBar, QStatusBar

from koroku_desktop.ui.bridge import AgentBridge


class ChatStatusBar(QStatusBar):
    """The status bar of the chat window: model label, sync label and context meter."""

    def __init__(self, model_name: str) -> None:
        super().__init__()
        self.setSizeGripEnabled(False)
        self.model_label = QLabel(model_name)
        self.addWidget(self.model_label)
        self._meter_tip = ""
        self._wide = True
        self._meter = (0, 0)
        self._cache_note = ""
        self.meter = QProgressBar()
        self.meter.setObjectName("Meter")
        self.meter.setTextVisible(False)
        self.meter.setRange(0, 1000)
        self.meter.setFixedWidth(110)
        self.sync_label = QLabel("")
        self.sync_label.setObjectName("SyncStatus")
        self.sync_label.hide()  # shown once sync reports (a hub is configured)
        self.addPermanentWidget(self.sync_label)
        self.meter_label = QLabel("context —")
        self.addPermanentWidget(self.meter_label)
        self.addPermanentWidget(self.meter)
        self.setContentsMargins(8, 2, 14, 2)

    def follow(self, bridge: AgentBridge) -> None:
        """Show the bridge's context meter, cache note, status texts, sync state and waiting."""
        bridge.context_meter.connect(self.show_meter)
        bridge.context_meter_pending.connect(self.show_meter_pending)
        bridge.context_cache_note.connect(self.show_cache_note)
        bridge.status.connect(lambda text: self.showMessage(text, 10_000))
        bridge.sync_status.connect(self.show_sync_status)
        bridge.waiting_changed.connect(self.show_waiting)

    def show_sync_status(self, text: str) -> None:
        """The sync state in the status bar ('Sync: up to date', 'Sync: offline since …');
        a long one (an error) is cut with '…', whole in the tooltip."""
        metrics = self.sync_label.fontMetrics()
        self.sync_label.setText(metrics.elidedText(text, Qt.TextElideMode.ElideRight, 300))
        self.sync_label.setToolTip(text)
        self.sync_label.show()

    def show_notice(self, line: str) -> None:
        """A one-line notice (e.g. an MCP server that failed) in the status bar for a while."""
        self.showMessage(f"⚠ {line}", 15_000)

    def show_waiting(self, text: str) -> None:
        """While another front end's turn runs, say so ("" clears it)."""
        if text:
            self.showMessage(f"◌ {text}…")
        else:
            self.clearMessage()

    def show_meter(self, used: int, threshold: int) -> None:
        """Context use against the compaction threshold."""
        self._meter = (used, threshold)
        fraction = used / threshold if threshold else 0.0
        self.meter.setValue(min(1000, int(fraction * 1000)))
        words = f"context {used / 1000:.1f}k / {threshold / 1000:.0f}k"
        self.meter_label.setText(words if self._wide else f"{fraction:.0%}")
        self._meter_tip = f"{words}: {fraction:.0%} of the context before Koroku compacts it"
        self._show_meter_tip()

    def show_meter_pending(self) -> None:
        """The conversation's live context is still being read: its use is not known yet."""
        self._meter = (0, 0)
        self.meter.setValue(0)
        self.meter_label.setText("context …" if self._wide else "…")
        self._meter_tip = "Reading this conversation's context…"
        self._show_meter_tip()

    def set_wide(self, wide: bool) -> None:
        """A narrow window keeps the meter with a short "12%" beside it (the words go to its
        tooltip) and a shorter bar."""
        if wide != self._wide:
            self._wide = wide
            self.meter.setFixedWidth(110 if wide else 60)
            if self._meter != (0, 0):
                self.show_meter(*self._meter)

    def show_cache_note(self, note: str) -> None:
        """How much of the last request Gemini served from its prompt cache (in the tooltip)."""
        self._cache_note = note
        self._show_meter_tip()

    def _show_meter_tip(self) -> None:
        tip, note = self._meter_tip, self._cache_note
        self.meter.setToolTip(f"{tip}\n{note}" if note else tip)
