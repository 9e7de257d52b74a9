"""Small exports in ChatGPT's and Claude's real formats, with the odd cases real ones have.

ChatGPT's `conversations.json` is written from the public descriptions of its shape: the
export format notes and TypeScript types of mitkury/chatgpt-export-parser
(docs/chatgpt-data-export-format.md: a list of conversations with `mapping` nodes `id`,
`message` or null, `parent`, `children`; `current_node`; messages with `author.role`
user/assistant/system/tool, `content.content_type` text / multimodal_text / code /
execution_output with `parts` or `text`, `create_time` that may be null, `recipient`,
`metadata.attachments`, `is_visually_hidden_from_conversation`; images as
`image_asset_pointer` parts pointing at `file-service://file-…`, stored in the zip as
`file-…-name.png`), and the read_chat.py parser of econDS/ChatGPT_chat_history_search (which
skips null messages and reads `content.parts[0]` or `content.text`).

Claude's is written from Sinity/polylogue's docs/providers/claude-ai.md and the TypeScript
types of public Claude export viewers: a list of conversations `uuid`, `name`,
`created_at`/`updated_at` (ISO 8601), `chat_messages` with `uuid`, `sender` human/assistant,
`text`, `content` blocks (`text`, `thinking`, `tool_use`, `tool_result`), `created_at`,
`attachments` (`file_name`, `file_size`, `file_type`, `extracted_content`) and `files`
(`file_name` only).
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 24 + b"tiny image"
T0 = 1_700_000_000.0


def node(
    node_id: str,
    parent: str | None,
    children: list[str],
    message: dict[str, Any] | None,
) -> dict[str, Any]:
    """One `mapping` node."""
    return {"id": node_id, "message": message, "parent": parent, "children": children}


def msg(
    node_id: str,
    role: str,
    parts: list[Any] | None = None,
    *,
    at: float | None = None,
    content_type: str = "text",
    text: str | None = None,
    recipient: str = "all",
    name: str | None = None,
    language: str | None = None,
    thoughts: list[Any] | None = None,
    **metadata: Any,
) -> dict[str, Any]:
    """One ChatGPT message (`content` with `parts`, `text` for code and outputs, or
    `thoughts` for a reasoning node)."""
    content: dict[str, Any] = {"content_type": content_type}
    if parts is not None:
        content["parts"] = parts
    if text is not None:
        content["text"] = text
    if language is not None:
        content["language"] = language
    if thoughts is not None:
        content["thoughts"] = thoughts
    return {
        "id": node_id,
        "author": {"role": role, "name": name, "metadata": {}},
        "create_time": at,
        "update_time": None,
        "content": content,
        "status": "finished_successfully",
        "end_turn": True,
        "weight": 1.0,
        "metadata": metadata,
        "recipient": recipient,
    }


def chatgpt_branching() -> dict[str, Any]:
    """A chat with every odd case: a hidden system message, a deleted (null) node, an edited
    question (two branches), a regenerated answer, a code-interpreter cell and its output, an
    image held by the zip and a file only named, Unicode, missing times."""
    nodes = [
        node("root", None, ["sys"], None),
        node(
            "sys",
            "root",
            ["u1"],
            msg("sys", "system", [""], is_visually_hidden_from_conversation=True),
        ),
        node(
            "u1",
            "sys",
            ["a1-old", "a1"],
            msg("u1", "user", ["Wie heißt die Hauptstadt? 東京? 🐍"], at=T0 + 10),
        ),
        node("a1-old", "u1", [], msg("a1-old", "assistant", ["First try: Berlin."], at=T0 + 20)),
        node(
            "a1", "u1", ["gone"], msg("a1", "assistant", ["Berlin ist die Hauptstadt."], at=T0 + 30)
        ),
        node("gone", "a1", ["u2-old", "u2"], None),
        node("u2-old", "gone", ["a2-old"], msg("u2-old", "user", ["plot squares"], at=T0 + 40)),
        node(
            "a2-old",
            "u2-old",
            [],
            msg("a2-old", "assistant", ["Old answer about squares"], at=T0 + 41),
        ),
        node(
            "u2",
            "gone",
            ["code"],
            msg(
                "u2",
                "user",
                [
                    {
                        "content_type": "image_asset_pointer",
                        "asset_pointer": "file-service://file-IMG1",
                        "width": 4,
                        "height": 4,
                    },
                    "what is in this picture? and compute cubes",
                ],
                at=None,
                content_type="multimodal_text",
                attachments=[
                    {"id": "file-DOC9", "name": "notes.pdf", "mime_type": "application/pdf"}
                ],
            ),
        ),
        node(
            "code",
            "u2",
            ["out"],
            msg(
                "code",
                "assistant",
                content_type="code",
                text="print([n**3 for n in range(4)])",
                recipient="python",
                at=T0 + 50,
                language="unknown",
            ),
        ),
        node(
            "out",
            "code",
            ["thinking"],
            msg(
                "out",
                "tool",
                content_type="execution_output",
                text="[0, 1, 8, 27]",
                name="python",
                at=T0 + 51,
            ),
        ),
        node(
            "thinking",
            "out",
            ["a2"],
            msg("thinking", "assistant", content_type="thoughts", at=T0 + 52),
        ),
        node(
            "a2", "thinking", [], msg("a2", "assistant", ["The cubes are 0, 1, 8 and 27."], at=None)
        ),
    ]
    return {
        "title": "Hauptstadt & cubes",
        "create_time": T0,
        "update_time": T0 + 60,
        "mapping": {n["id"]: n for n in nodes},
        "current_node": "a2",
        "conversation_id": "chat-branching",
        "id": "chat-branching",
        "moderation_results": [],
    }


def chatgpt_simple(chat_id: str, title: str | None, turns: list[tuple[str, str]]) -> dict[str, Any]:
    """A straight chat of (question, answer) turns."""
    nodes = [node("root", None, [], None)]
    parent = "root"
    for n, (question, answer) in enumerate(turns):
        for role, text, suffix in (("user", question, "q"), ("assistant", answer, "a")):
            node_id = f"{chat_id}-{n}{suffix}"
            nodes[-1]["children"].append(node_id)
            nodes.append(node(node_id, parent, [], msg(node_id, role, [text], at=T0 + 100 + n)))
            parent = node_id
    return {
        "title": title,
        "create_time": T0 + 100,
        "update_time": T0 + 200,
        "mapping": {n["id"]: n for n in nodes},
        "current_node": parent,
        "conversation_id": chat_id,
        "id": chat_id,
    }


def write_chatgpt_zip(path: Path, chats: list[dict[str, Any]], *, image: bool = True) -> Path:
    """The export zip: conversations.json, chat.html, and the files it holds."""
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("conversations.json", json.dumps(chats, ensure_ascii=False))
        archive.writestr("chat.html", "<html></html>")
        archive.writestr("user.json", "{}")
        if image:
            archive.writestr("file-IMG1-photo.png", PNG)
    return path


def claude_export() -> list[dict[str, Any]]:
    """Two Claude conversations: content blocks with thinking and tool use, an attachment
    with its extracted text, a file only named, a message with only `text`, Unicode, a
    missing time, an unknown sender."""
    return [
        {
            "uuid": "claude-1",
            "name": "Résumé review ✍️",
            "created_at": "2024-05-01T10:00:00.000000Z",
            "updated_at": "2024-05-01T10:05:00.000000Z",
            "account": {"uuid": "acct"},
            "chat_messages": [
                {
                    "uuid": "c1-m1",
                    "text": "Please review my résumé",
                    "content": [{"type": "text", "text": "Please review my résumé"}],
                    "sender": "human",
                    "created_at": "2024-05-01T10:00:01.000000Z",
                    "attachments": [
                        {
                            "file_name": "resume.txt",
                            "file_size": 31,
                            "file_type": "txt",
                            "extracted_content": "Jane Doe — gardener since 2009",
                        }
                    ],
                    "files": [{"file_name": "headshot.jpg"}],
                },
                {
                    "uuid": "c1-m2",
                    "text": "",
                    "content": [
                        {"type": "thinking", "thinking": "secret reasoning"},
                        {"type": "tool_use", "name": "web_search", "input": {"q": "gardener"}},
                        {
                            "type": "tool_result",
                            "name": "web_search",
                            "content": [{"type": "text", "text": "tool noise"}],
                        },
                        {"type": "text", "text": "Your résumé reads well; mention the roses."},
                    ],
                    "sender": "assistant",
                    "created_at": "2024-05-01T10:00:09.000000Z",
                    "attachments": [],
                    "files": [],
                },
                {
                    "uuid": "c1-m3",
                    "text": "",
                    "content": [],
                    "sender": "human",
                    "created_at": None,
                    "attachments": [],
                    "files": [],
                },
                {"uuid": "c1-m4", "text": "stray", "sender": "system", "created_at": None},
            ],
        },
        {
            "uuid": "claude-2",
            "name": "",
            "created_at": "2024-06-01T08:00:00Z",
            "updated_at": "2024-06-01T08:00:00Z",
            "chat_messages": [
                {
                    "uuid": "c2-m1",
                    "text": "Only text field here",
                    "sender": "human",
                    "created_at": "2024-06-01T08:00:01Z",
                },
                {"uuid": "c2-m2", "text": "And an answer", "sender": "assistant"},
            ],
        },
    ]
