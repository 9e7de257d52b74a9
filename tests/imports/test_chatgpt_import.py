"""ChatGPT's data export into the log, in process: the branch ending at `current_node` is the
conversation, the other branches are superseded turns, odd nodes are skipped, files held by
the zip become attachments and named ones are shown missing; importing is idempotent, a newer
export adds only what is new, and a damaged or foreign file writes nothing.

The sample exports (tests/imports/samples.py) are written from public descriptions of the
format: mitkury/chatgpt-export-parser's docs/chatgpt-data-export-format.md and the
read_chat.py parser of econDS/ChatGPT_chat_history_search.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from koroku_desktop.agent.conversations import ConversationBook
from koroku_desktop.blobs.blob_store import BlobStore
from koroku_desktop.domain.context import ContextView
from koroku_desktop.domain.conversations import most_recent
from koroku_desktop.domain.events import MessageEvent, StoredEvent, SupersededEvent
from koroku_desktop.domain.parts import AttachmentPart, TextPart
from koroku_desktop.maintenance.foreign_files import detect
from koroku_desktop.maintenance.foreign_import import ForeignReport, conversation_id_of
from koroku_desktop.maintenance.other_assistants import (
    ForeignFormatError,
    import_other_assistant,
)
from koroku_desktop.store import SqliteEventLog
from tests.imports.samples import (
    PNG,
    T0,
    chatgpt_branching,
    chatgpt_simple,
    msg,
    node,
    write_chatgpt_zip,
)

NOW = 1_800_000_000.0


@pytest.fixture
def log(tmp_path: Path) -> SqliteEventLog:
    opened = SqliteEventLog(tmp_path / "data" / "koroku.db")
    yield opened  # type: ignore[misc]
    opened.close()


def _import(log: SqliteEventLog, path: Path, blobs: Path | None = None) -> ForeignReport:
    return import_other_assistant(log, path, "chatgpt", import_time=NOW, blobs_dir=blobs)


def _texts(events: list[StoredEvent]) -> list[str]:
    return [
        " ".join(p.text for p in e.event.parts if isinstance(p, TextPart))
        for e in events
        if isinstance(e.event, MessageEvent)
    ]


def _everything(log: SqliteEventLog, cid: str) -> list[StoredEvent]:
    return [e for e in log.in_order(cid) if isinstance(e, StoredEvent)]


def test_the_current_branch_is_the_conversation_and_other_branches_are_replaced(
    log: SqliteEventLog, tmp_path: Path
) -> None:
    export = write_chatgpt_zip(tmp_path / "export.zip", [chatgpt_branching()])
    assert detect(export) == "chatgpt"
    report = _import(log, export, tmp_path / "blobs")
    cid = conversation_id_of("chatgpt", "chat-branching")

    live = log.load_live(cid)
    view = ContextView.from_tail(live.boundary, live.events)
    assert _texts(view.messages) == [
        "Wie heißt die Hauptstadt? 東京? 🐍",
        "Berlin ist die Hauptstadt.",
        "what is in this picture? and compute cubes\n[attachment not in the export: notes.pdf]",
        "```\nprint([n**3 for n in range(4)])\n```",
        "Output (python):\n```\n[0, 1, 8, 27]\n```",
        "The cubes are 0, 1, 8 and 27.",
    ]
    assert [m.event.role for m in view.messages if isinstance(m.event, MessageEvent)] == [
        "user", "model", "user", "model", "model", "model"
    ]  # fmt: skip
    # The other branches stay in the log (history, search) as superseded turns, each right
    # after the message it branched from.
    every = _everything(log, cid)
    texts = _texts(every)
    assert texts.index("First try: Berlin.") < texts.index("Berlin ist die Hauptstadt.")
    assert {"plot squares", "Old answer about squares"} <= set(texts)
    superseded = [e.event for e in every if isinstance(e.event, SupersededEvent)]
    assert [s.reason for s in superseded] == ["regenerate", "edit", "regenerate"]
    # In the log's order each replaced branch comes whole, then its `superseded` events,
    # then the message that replaced it.
    kinds = [_texts([e])[0] if isinstance(e.event, MessageEvent) else e.event.kind for e in every]
    at = kinds.index("plot squares")
    assert kinds[at : at + 5] == [
        "plot squares",
        "Old answer about squares",
        "superseded",
        "superseded",
        "what is in this picture? and compute cubes\n[attachment not in the export: notes.pdf]",
    ]
    # System, hidden, thoughts and deleted nodes are not messages at all.
    assert len([e for e in every if isinstance(e.event, MessageEvent)]) == 9
    # The image the zip holds is an attachment in the blob store; the named file is missing.
    (question,) = [m for m in view.messages if "picture" in _texts([m])[0]]
    assert isinstance(question.event, MessageEvent)
    (image,) = [p for p in question.event.parts if isinstance(p, AttachmentPart)]
    assert image.mime_type == "image/png" and image.name == "file-IMG1-photo.png"
    assert BlobStore(tmp_path / "blobs").read(image.sha256) == PNG
    assert report.files == 1 and report.missing_files == 1
    # Original times; a missing one is the previous message's.
    messages = [e for e in every if isinstance(e.event, MessageEvent)]
    times = {t: e.created_at for t, e in zip(_texts(messages), messages, strict=True)}
    assert times["Wie heißt die Hauptstadt? 東京? 🐍"] == T0 + 10
    assert times["The cubes are 0, 1, 8 and 27."] == T0 + 51


def test_the_conversation_has_its_title_times_origin_and_is_read_only(
    log: SqliteEventLog, tmp_path: Path
) -> None:
    book = ConversationBook(log)
    mine = book.create("My own")
    export = write_chatgpt_zip(tmp_path / "export.zip", [chatgpt_branching()])
    _import(log, export)
    imported = book.get(conversation_id_of("chatgpt", "chat-branching"))
    assert imported is not None
    assert (imported.title, imported.origin, imported.origin_name) == (
        "Hauptstadt & cubes",
        "chatgpt",
        "ChatGPT",
    )
    assert imported.created_at == T0 and imported.read_only and imported.messages == 9
    # Never opened by default: the person's own conversation stays the current one.
    current = most_recent(book.all().values())
    assert current is not None and current.id == mine.id
    # Continuing it makes it a conversation like any other.
    log.append(imported.id, [MessageEvent(role="user", parts=[TextPart(text="more")])])
    assert not book.get(imported.id).read_only  # type: ignore[union-attr]


def test_importing_again_adds_nothing_and_a_newer_export_only_what_is_new(
    log: SqliteEventLog, tmp_path: Path
) -> None:
    first = [chatgpt_branching(), chatgpt_simple("s1", "Simple", [("hi", "hello")])]
    export = write_chatgpt_zip(tmp_path / "export.zip", first)
    _import(log, export, tmp_path / "blobs")
    count = log.count()
    again = _import(log, export, tmp_path / "blobs")
    assert log.count() == count
    assert again.messages == 0 and again.files == 0

    newer = [
        chatgpt_branching(),
        chatgpt_simple("s1", "Simple", [("hi", "hello"), ("and now?", "more")]),
        chatgpt_simple("s2", None, [("a brand new chat", "yes")]),
    ]
    (tmp_path / "newer").mkdir()
    report = _import(log, write_chatgpt_zip(tmp_path / "newer" / "export.zip", newer))
    assert (report.messages, report.new_chats) == (4, 1)
    assert report.updated_chats == 1
    simple = _texts(_everything(log, conversation_id_of("chatgpt", "s1")))
    assert simple == ["hi", "hello", "and now?", "more"]
    book = ConversationBook(log)
    untitled = book.get(conversation_id_of("chatgpt", "s2"))
    assert untitled is not None and untitled.title == "a brand new chat"
    assert book.get(conversation_id_of("chatgpt", "s1")).read_only  # type: ignore[union-attr]


def test_a_newer_export_that_regenerated_an_answer_replaces_the_old_one(
    log: SqliteEventLog, tmp_path: Path
) -> None:
    chat = chatgpt_simple("s1", "Simple", [("hi", "hello")])
    _import(log, write_chatgpt_zip(tmp_path / "export.zip", [chat]))
    # Since then the answer was regenerated in ChatGPT: a second child of the question.
    chat["mapping"]["s1-0q"]["children"].append("s1-0b")
    chat["mapping"]["s1-0b"] = node(
        "s1-0b", "s1-0q", [], msg("s1-0b", "assistant", ["hello again"], at=T0 + 300)
    )
    chat["current_node"] = "s1-0b"
    (tmp_path / "newer").mkdir()
    report = _import(log, write_chatgpt_zip(tmp_path / "newer" / "export.zip", [chat]))
    assert report.messages == 1
    cid = conversation_id_of("chatgpt", "s1")
    live = log.load_live(cid)
    assert _texts(ContextView.from_tail(live.boundary, live.events).messages) == [
        "hi",
        "hello again",
    ]
    assert _texts(_everything(log, cid)) == ["hi", "hello", "hello again"]


def test_a_chat_without_any_time_is_imported_once(log: SqliteEventLog, tmp_path: Path) -> None:
    chat = chatgpt_simple("timeless", "No times", [("when?", "never")])
    chat["create_time"] = None
    for item in chat["mapping"].values():
        if item["message"] is not None:
            item["message"]["create_time"] = None
    export = write_chatgpt_zip(tmp_path / "export.zip", [chat])
    import_other_assistant(log, export, "chatgpt", import_time=NOW)
    count = log.count()
    again = import_other_assistant(log, export, "chatgpt", import_time=NOW + 3600)
    assert log.count() == count and again.messages == 0
    times = {e.created_at for e in _everything(log, conversation_id_of("chatgpt", "timeless"))}
    assert times == {NOW}  # shown at the time it was first imported


def test_imported_text_is_found_by_keywords_at_once(log: SqliteEventLog, tmp_path: Path) -> None:
    _import(log, write_chatgpt_zip(tmp_path / "export.zip", [chatgpt_branching()]))
    hits = log.search("Hauptstadt")
    assert hits and all(
        h.conversation_id == conversation_id_of("chatgpt", "chat-branching") for h in hits
    )


def test_conversations_json_beside_its_files_reads_like_the_zip(
    log: SqliteEventLog, tmp_path: Path
) -> None:
    folder = tmp_path / "unzipped"
    folder.mkdir()
    (folder / "conversations.json").write_text(json.dumps([chatgpt_branching()]))
    (folder / "file-IMG1-photo.png").write_bytes(PNG)
    report = _import(log, folder / "conversations.json", tmp_path / "blobs")
    assert report.files == 1 and report.missing_files == 1


@pytest.mark.parametrize(
    ("content", "why"),
    [
        ("[" + json.dumps(chatgpt_simple("s1", "x", [("a", "b")]))[:-40], "damaged"),
        ('[{"title": "x", "id": "y", "mapping": {}}, {"tit', "damaged after 2"),
        ('[{"title": "no mapping", "id": "x"}]', "conversations.json: conversation 1 has no"),
        ("[]", "no conversations"),
    ],
)
def test_a_damaged_export_writes_nothing(
    log: SqliteEventLog, tmp_path: Path, content: str, why: str
) -> None:
    good = json.dumps(chatgpt_simple("ok", "fine", [("q", "a")]))
    path = tmp_path / "conversations.json"
    # A good chat first: a streamed import must still write nothing when a later one is bad.
    path.write_text(content.replace("[", "[" + good + ", ", 1) if content != "[]" else content)
    with pytest.raises(ForeignFormatError, match=why):
        _import(log, path)
    assert log.count() == 0


def test_other_files_are_not_taken_for_an_export(tmp_path: Path) -> None:
    cases = {
        "list.json": "[1, 2, 3]",
        "object.json": '{"mapping": {}}',
        "text.txt": "hello",
        "other.json": '[{"messages": []}]',
    }
    for name, text in cases.items():
        (tmp_path / name).write_text(text)
        assert detect(tmp_path / name) is None, name
