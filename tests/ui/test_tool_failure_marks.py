"""One rule for "did this tool call fail?": every surface shows the same ✓ or ✗.

Four real bash calls in one step — `false` (exit 1), a command that times out, a denied call
and a successful one — asked from the quick-ask popup, then read back by every surface: the
live chat card, the chat rebuilt from the log by a second store (a restart), the popup's tool
line, the viewer, `koroku history` in a subprocess, the Markdown and JSON exports and the
search text.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from pytestqt.qtbot import QtBot

from koroku_desktop.app.exports import export_file
from koroku_desktop.domain.events import LogEntry, MessageEvent, StoredEvent
from koroku_desktop.maintenance.portable import import_export
from koroku_desktop.render import blocks as b
from koroku_desktop.render.fold import entry_view
from koroku_desktop.render.text import FAIL_MARK, OK_MARK
from koroku_desktop.store import SqliteEventLog
from koroku_desktop.store.search.searchable import searchable_text
from koroku_desktop.ui.app import Desktop
from koroku_desktop.ui.chat.message_model import MessageModel
from koroku_desktop.ui.viewer.event_render import readable, summary
from tests.fakes.gemini_server import FakeGemini
from tests.ui.helpers import quick_ask_into_the_chat, rows, type_and_send

CALLS = (
    ("bash", {"command": "false"}),
    ("bash", {"command": "sleep 30", "timeout_seconds": 0.5}),
    ("bash", {"command": "echo never-runs"}),
    ("bash", {"command": "echo fine"}),
)
ANSWERS = ("allow", "allow", "deny", "allow")
EXPECTED = [FAIL_MARK, FAIL_MARK, FAIL_MARK, OK_MARK]
STATUS_MARK = {"ok": OK_MARK, "error": FAIL_MARK}


def _markdown_marks(text: str) -> list[str]:
    heads = re.findall(r"\*\*Tool (failed|result) ← `bash`\*\*", text)
    return [FAIL_MARK if h == "failed" else OK_MARK for h in heads]


def _tool_entry(entries: list[LogEntry]) -> StoredEvent:
    return next(
        e
        for e in entries
        if isinstance(e, StoredEvent)
        and isinstance(e.event, MessageEvent)
        and e.event.function_responses
    )


def _run_the_four_calls(desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot) -> list[str]:
    """Ask from the popup; answer the approvals; return the popup's tool line per call."""
    fake_gemini.reply_calls(*CALLS)
    fake_gemini.reply_text("Done.")
    quick_ask_into_the_chat(desktop)  # the chat window shows the same calls
    desktop.show_quick_ask()
    popup = desktop.popup
    qtbot.waitExposed(popup)
    popup.pin_button.setChecked(True)
    labels: list[str] = []
    desktop.bridge.tool_finished.connect(lambda _c, _p: labels.append(popup.tool_label.text()))
    type_and_send(qtbot, popup.input, "run the four commands")
    for n, answer in enumerate(ANSWERS):
        qtbot.waitUntil(
            lambda n=n: len(popup.approvals.cards()) == 1 and len(labels) == n, timeout=15000
        )
        card = popup.approvals.cards()[0]
        (card.allow_once if answer == "allow" else card.deny).click()
        qtbot.waitUntil(lambda n=n: len(labels) == n + 1, timeout=15000)
    qtbot.waitUntil(lambda: not desktop.bridge.busy, timeout=15000)
    return [label.split()[0] for label in labels]


def test_every_surface_shows_the_same_tool_failure_mark(
    desktop: Desktop, fake_gemini: FakeGemini, qtbot: QtBot, tmp_path: Path
) -> None:
    quick_ask = _run_the_four_calls(desktop, fake_gemini, qtbot)
    runtime = desktop.runtime
    cid = runtime.agent.conversation_id
    live_cards = [STATUS_MARK[item.status] for item in rows(desktop.window.model, "tool")]

    reopened = SqliteEventLog(runtime.paths.db)  # a second store on the same file: a restart
    try:
        entries = reopened.entries(cid)
        restarted = MessageModel()
        restarted.set_entries(entries)
        after_restart = [STATUS_MARK[item.status] for item in rows(restarted, "tool")]
        hits = reopened.search("failed bash")
    finally:
        reopened.close()

    tool_entry = _tool_entry(entries)
    viewer = _markdown_marks(readable(tool_entry))
    assert summary(tool_entry).startswith(f"{FAIL_MARK} bash")

    history = subprocess.run(
        [sys.executable, "-m", "koroku_desktop", "history"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    terminal = re.findall(rf" ([{OK_MARK}{FAIL_MARK}]) bash$", history.stdout, re.MULTILINE)

    markdown_file = tmp_path / "log.md"
    export_file(runtime.log, cid, "md", False, markdown_file, runtime.attachments)
    markdown = _markdown_marks(markdown_file.read_text(encoding="utf-8"))

    json_file = tmp_path / "log.json"
    export_file(runtime.log, cid, "json", False, json_file, runtime.attachments)
    imported_log = SqliteEventLog(tmp_path / "imported.db")
    try:
        import_export(imported_log, json_file)
        imported = entry_view(_tool_entry(imported_log.entries(cid)))
    finally:
        imported_log.close()
    json_export = [
        FAIL_MARK if block.failed else OK_MARK
        for block in imported.blocks
        if isinstance(block, b.ToolResultBlock)
    ]

    lines = searchable_text(tool_entry.event).splitlines()
    search = [FAIL_MARK if line.startswith("bash failed ") else OK_MARK for line in lines]

    surfaces = {
        "live chat card": live_cards,
        "chat after restart": after_restart,
        "quick-ask": quick_ask,
        "viewer": viewer,
        "koroku history": terminal,
        "Markdown export": markdown,
        "JSON export": json_export,
        "search text": search,
    }
    assert surfaces == dict.fromkeys(surfaces, EXPECTED)
    assert [hit.seq for hit in hits] == [tool_entry.seq]
