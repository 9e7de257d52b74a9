"""ModelPicker: the model the next message goes to, chosen beside the Send button (the same
setting as Settings → Model; a model fixed by KOROKU_MODEL is shown, not offered)."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QComboBox, QSizePolicy, QWidget

from koroku_desktop.ui.settings.dialog import MODELS


class ModelPicker(QComboBox):
    """A compact drop-down of the known models and the one in use; `chosen(name)` on a pick."""

    chosen = Signal(str)

    def __init__(self, model: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ModelPicker")
        self.setAccessibleName("Model")
        self.setToolTip("The model that answers the next message (also in Settings)")
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Fixed)
        self.show_model(model)
        self.activated.connect(lambda _i: self.chosen.emit(self.currentText()))

    def show_model(self, model: str, locked_by: str | None = None) -> None:
        """Show `model` as chosen (a model not in the list is added); `locked_by` names the
        environment variable that fixes it, and the picker is then read-only."""
        self.blockSignals(True)
        self.clear()
        names = list(MODELS) if model in MODELS else [model, *MODELS]
        self.addItems(names)
        self.setCurrentText(model)
        self.blockSignals(False)
        self.setEnabled(locked_by is None)
        if locked_by is not None:
            self.setToolTip(f"The model is set by {locked_by} in the environment")
