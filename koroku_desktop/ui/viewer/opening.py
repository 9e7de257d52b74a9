"""The History & memory viewer over a runtime: what the desktop app opens (the runtime's log,
registry, search, facts and memory folder; export and import through the code `koroku export`
and `koroku import` use)."""

from __future__ import annotations

from functools import partial

from koroku_desktop.agent.memory_events import record_edit
from koroku_desktop.app.exports import export_writer
from koroku_desktop.app.imports import importer_for
from koroku_desktop.app.runtime import Runtime
from koroku_desktop.ui.viewer.dialog import HistoryDialog


def open_viewer(runtime: Runtime) -> HistoryDialog:
    """A viewer over `runtime`, on the conversation its agent talks in."""
    rt = runtime
    talked_in = rt.agent.conversation_id
    export = export_writer(rt.log, talked_in, rt.attachments)

    dialog = HistoryDialog(
        rt.log,
        export,
        rt.paths.memory,
        talked_in,
        find=rt.find,
        progress=rt.embedding_progress,
        record_memory=partial(record_edit, rt.log, talked_in, rt.paths.home),
        facts=rt.facts,
        conversations=rt.conversations,
        importer=importer_for(rt.paths),
    )
    embedder = rt.background_embedder
    if embedder is not None and dialog.importer is not None:
        # Imported history is found by keywords at once, and by meaning once embedded.
        dialog.importer.imported.connect(embedder.kick)
    return dialog
