"""Claude's data export (`conversations.json`, or the export zip) as `ForeignChat`s.

The file is a list of conversations: `uuid`, `name`, `created_at`/`updated_at` (ISO 8601)
and `chat_messages`, each with `uuid`, `sender` (`human` or `assistant`), `text` and/or
`content` (blocks: `text`, `thinking`, `tool_use`, `tool_result`), `created_at`,
`attachments` (`file_name`, `file_type`, `file_size`, `extracted_content`: the text Claude
read from the file) and `files` (uploaded images and files, named only: the export does not
hold their bytes). What is taken as history:

- the text blocks of each message (its `text` when it has no content blocks); thinking,
  tool use and tool results are Claude's own scaffolding and are left out;
- an attachment with `extracted_content` as a text file in the blob store; a file the
  export only names is shown as missing;
- where messages name their `parent_message_uuid` and a message has several answers (a
  retry, an edited question), the branch ending at `current_leaf_message_uuid` (else the
  last message) is the conversation and the others are replaced turns.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from koroku_desktop.domain.events import Role
from koroku_desktop.maintenance.foreign_files import chats_of, mime_of, text_of, when
from koroku_desktop.maintenance.foreign_import import (
    ForeignChat,
    ForeignFile,
    ForeignFormatError,
    ForeignMessage,
)

_ROLES: dict[str, Role] = {"human": "user", "user": "user", "assistant": "model"}


def read_claude(path: Path) -> Iterator[ForeignChat]:
    """Every conversation of the export at `path`, in file order, read incrementally.
    Raises `ForeignFormatError` for a damaged file or a conversation without messages."""
    for n, raw in chats_of(path):
        yield claude_chat(raw, n)


def claude_chat(raw: dict[str, Any], n: int) -> ForeignChat:
    """One conversation object as a `ForeignChat` (see the module for what is kept)."""
    export_id = text_of(raw.get("uuid"))
    messages = raw.get("chat_messages")
    if not export_id or not isinstance(messages, list):
        raise ForeignFormatError(f"conversation {n} has no uuid or no chat_messages")
    chat = ForeignChat("claude", export_id, text_of(raw.get("name")), when(raw.get("created_at")))
    replaced = _replaced(messages, raw.get("current_leaf_message_uuid"))
    for index, message in enumerate(messages):
        if isinstance(message, dict):
            converted = _message(message, export_id, index)
            if converted is not None:
                by = replaced.get(converted.export_id)
                chat.messages.append(replace(converted, replaced_by=by) if by else converted)
    return chat


def _replaced(messages: list[Any], leaf: Any) -> dict[str, str]:
    """Message uuid -> the uuid of the message on the current branch that replaced its
    branch; empty when the messages do not all name their parent (a linear chat)."""
    parents: dict[str, str] = {}
    for message in messages:
        if not isinstance(message, dict):
            return {}
        uuid, parent = message.get("uuid"), message.get("parent_message_uuid")
        if not isinstance(uuid, str) or not isinstance(parent, str):
            return {}
        parents[uuid] = parent
    if not parents:
        return {}
    node = leaf if isinstance(leaf, str) and leaf in parents else list(parents)[-1]
    main: list[str] = []
    while node in parents and node not in main:
        main.append(node)
        node = parents[node]
    on_main = set(main)
    main_child = {parents[m]: m for m in main}  # branch point -> its child on the branch
    replaced: dict[str, str] = {}
    for uuid in parents:
        if uuid in on_main:
            continue
        node, seen = uuid, set()
        while node in parents and parents[node] not in main_child and node not in seen:
            seen.add(node)
            node = parents[node]
        if node in parents and parents[node] in main_child:
            replaced[uuid] = main_child[parents[node]]
    return replaced


def _message(message: dict[str, Any], chat_id: str, index: int) -> ForeignMessage | None:
    role = _ROLES.get(text_of(message.get("sender")))
    if role is None:
        return None
    text = _text(message)
    files = [*_attachments(message.get("attachments")), *_named(message.get("files"))]
    if not text.strip() and not files:
        return None
    return ForeignMessage(
        export_id=text_of(message.get("uuid")) or f"{chat_id}#{index}",
        role=role,
        text=text,
        created_at=when(message.get("created_at")),
        files=tuple(files),
    )


def _text(message: dict[str, Any]) -> str:
    blocks = message.get("content")
    if isinstance(blocks, list) and blocks:
        texts = [
            text_of(b.get("text"))
            for b in blocks
            if isinstance(b, dict) and b.get("type") == "text"
        ]
        joined = "\n\n".join(t for t in texts if t.strip())
        if joined:
            return joined
    return text_of(message.get("text"))


def _attachments(items: Any) -> list[ForeignFile]:
    out: list[ForeignFile] = []
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        name = text_of(item.get("file_name")) or "attachment.txt"
        content = item.get("extracted_content")
        if isinstance(content, str) and content:
            data = text_of(content).encode("utf-8")
            out.append(ForeignFile(name, "text/plain", data))
        else:
            out.append(ForeignFile(name, mime_of(name, item.get("file_type"))))
    return out


def _named(items: Any) -> list[ForeignFile]:
    out: list[ForeignFile] = []
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict):
            name = text_of(item.get("file_name")) or text_of(item.get("file_uuid")) or "file"
            out.append(ForeignFile(name, mime_of(name)))
    return out
