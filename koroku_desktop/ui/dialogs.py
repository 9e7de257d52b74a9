"""Making the app's two dialogs from its runtime — the History & memory viewer (the log,
search, memory files and facts) and Settings (with the Scheduled tasks section) — and
bringing a window to the front. Split out of `ui/app.py`."""

from __future__ import annotations

from functools import partial

from PySide6.QtWidgets import QWidget

from koroku_desktop.agent.memory_events import record_edit
from koroku_desktop.app.runtime import Runtime
from koroku_desktop.domain.events import FactEvent, StoredEvent
from koroku_desktop.ui.settings.dialog import SettingsDialog
from koroku_desktop.ui.tasks.panel import TasksPanel
from koroku_desktop.ui.viewer.dialog import HistoryDialog


def make_history(runtime: Runtime) -> HistoryDialog:
    """The viewer over `runtime`'s current conversation."""
    return HistoryDialog(
        runtime.log,
        runtime.export_to_file,
        runtime.paths.memory,
        runtime.agent.conversation_id,
        find=runtime.find,
        progress=runtime.embedding_progress,
        record_memory=partial(
            record_edit, runtime.log, runtime.agent.conversation_id, runtime.paths.home
        ),
        facts=runtime.facts,
    )


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
