"""Claude's data export into the log, in process: text blocks are the history (thinking and
tool use left out), an attachment's extracted text is stored as a file, a file only named is
shown missing, ISO times are kept, and importing again adds nothing.

The sample export (tests/imports/samples.py `claude_export`) is written from Sinity/polylogue's
docs/providers/claude-ai.md (conversations with `chat_messages`: `sender`, `text`/`content`
blocks, `attachments` with `extracted_content`, `files`) and the TypeScript types of public
Claude export viewers (`uuid`, `name`, ISO 8601 `created_at`).
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from koroku_desktop.agent.conversations import ConversationBook
from koroku_desktop.blobs.blob_store import BlobStore
from koroku_desktop.domain.context import ContextView
from koroku_desktop.domain.events import MessageEvent, StoredEvent
from koroku_desktop.domain.parts import AttachmentPart, TextPart
from koroku_desktop.maintenance.foreign_files import detect
from koroku_desktop.maintenance.foreign_import import conversation_id_of
from koroku_desktop.maintenance.other_assistants import import_other_assistant
from koroku_desktop.store import SqliteEventLog
from tests.imports.samples import claude_export


@pytest.fixture
def log(tmp_path: Path) -> Iterator[SqliteEventLog]:
    opened = SqliteEventLog(tmp_path / "data" / "koroku.db")
    yield opened
    opened.close()


def _messages(log: SqliteEventLog, cid: str) -> list[StoredEvent]:
    return [
        e
        for e in log.in_order(cid)
        if isinstance(e, StoredEvent) and isinstance(e.event, MessageEvent)
    ]


def test_a_claude_export_becomes_conversations(log: SqliteEventLog, tmp_path: Path) -> None:
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(claude_export(), ensure_ascii=False))
    assert detect(path) == "claude"
    report = import_other_assistant(
        log, path, "claude", import_time=0.0, blobs_dir=tmp_path / "blobs"
    )
    assert (report.new_chats, report.messages, report.files, report.missing_files) == (2, 4, 1, 1)

    cid = conversation_id_of("claude", "claude-1")
    first, second = _messages(log, cid)
    assert isinstance(first.event, MessageEvent) and isinstance(second.event, MessageEvent)
    assert first.event.role == "user" and second.event.role == "model"
    assert first.created_at == datetime(2024, 5, 1, 10, 0, 1, tzinfo=UTC).timestamp()
    text = first.event.parts[0]
    assert isinstance(text, TextPart)
    assert text.text == "Please review my résumé\n[attachment not in the export: headshot.jpg]"
    (resume,) = [p for p in first.event.parts if isinstance(p, AttachmentPart)]
    assert (resume.name, resume.mime_type) == ("resume.txt", "text/plain")
    assert BlobStore(tmp_path / "blobs").read(resume.sha256).decode() == (
        "Jane Doe — gardener since 2009"
    )
    said = json.dumps(second.event.model_dump(mode="json"), ensure_ascii=False)
    assert "mention the roses" in said
    assert "secret reasoning" not in said and "tool noise" not in said

    book = ConversationBook(log)
    titled = book.get(cid)
    assert titled is not None and (titled.title, titled.origin) == ("Résumé review ✍️", "claude")
    assert titled.read_only
    untitled = book.get(conversation_id_of("claude", "claude-2"))
    assert untitled is not None and untitled.title == "Only text field here"

    count = log.count()
    again = import_other_assistant(log, path, "claude", import_time=1.0)
    assert log.count() == count and again.messages == 0


def test_the_claude_export_zip_is_read_too(log: SqliteEventLog, tmp_path: Path) -> None:
    path = tmp_path / "data-2024-06-01.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("users.json", "[]")
        archive.writestr("conversations.json", json.dumps(claude_export()))
    assert detect(path) == "claude"
    report = import_other_assistant(log, path, "claude", import_time=0.0)
    assert report.new_chats == 2


def test_a_retried_answer_is_a_replaced_turn(log: SqliteEventLog, tmp_path: Path) -> None:
    root = "00000000-0000-4000-8000-000000000000"

    def said(uuid: str, sender: str, parent: str, text: str) -> dict[str, object]:
        return {"uuid": uuid, "sender": sender, "text": text, "parent_message_uuid": parent}

    chat = {
        "uuid": "claude-branchy",
        "name": "Retried",
        "created_at": "2024-07-01T00:00:00Z",
        "current_leaf_message_uuid": "m4",
        "chat_messages": [
            said("m1", "human", root, "Name a colour"),
            said("m2a", "assistant", "m1", "Blue, first try"),
            said("m2b", "assistant", "m1", "Green, retried"),
            said("m3", "human", "m2b", "Why green?"),
            said("m4", "assistant", "m3", "It is calm."),
        ],
    }
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps([chat]))
    import_other_assistant(log, path, "claude", import_time=0.0)
    cid = conversation_id_of("claude", "claude-branchy")
    live = log.load_live(cid)
    view = ContextView.from_tail(live.boundary, live.events)
    assert _said(view.messages) == ["Name a colour", "Green, retried", "Why green?", "It is calm."]
    assert "Blue, first try" in _said(_messages(log, cid))


def _said(messages: list[StoredEvent]) -> list[str]:
    return [
        p.text
        for m in messages
        if isinstance(m.event, MessageEvent)
        for p in m.event.parts
        if isinstance(p, TextPart)
    ]
