"""Making Settings (with the Scheduled tasks section) from the app's runtime, the open
lists following a new fact, and bringing a window to the front (the viewer is made by
`ui/viewer/opening.py`). Split out of `ui/app.py`."""

from __future__ import annotations

from PySide6.QtWidgets import QWidget

from koroku_desktop.app.runtime import Runtime
from koroku_desktop.domain.events import FactEvent, StoredEvent
from koroku_desktop.ui.settings.dialog import SettingsDialog
from koroku_desktop.ui.tasks.panel import TasksPanel
from koroku_desktop.ui.viewer.dialog import HistoryDialog


def make_settings(runtime: Runtime, tasks: TasksPanel | None) -> SettingsDialog:
    """Settings over `runtime`'s settings, grants, key, MCP servers, sync, facts and tasks."""
    return SettingsDialog(
        runtime.settings_store,
        runtime.policy,
        runtime.model,
        runtime.mcp,
        runtime.sync_switch,
        facts=runtime.facts,
        conversation_id=runtime.agent.conversation_id,
        tasks=tasks,
    )


def bring_up(window: QWidget) -> None:
    """Show `window`, raised and active."""
    window.show()
    window.raise_()
    window.activateWindow()


def follow_facts(
    stored: StoredEvent, history: HistoryDialog | None, settings: SettingsDialog | None
) -> None:
    """A fact came (a turn, `koroku memory` elsewhere, a sync): the open lists follow."""
    if not isinstance(stored.event, FactEvent):
        return
    editors = (history.facts if history else None, settings.facts.editor if settings else None)
    for editor in editors:
        if editor is not None:
            editor.reload()
