"""Making the History & memory viewer for the running app: the runtime's log, search, memory
files and facts. Split out of `ui/app.py`."""

from __future__ import annotations

from functools import partial

from koroku_desktop.agent.memory_events import record_edit
from koroku_desktop.app.runtime import Runtime
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
