"""ChatGPT's data export (`conversations.json`, or the export zip) as `ForeignChat`s.

Each conversation holds a `mapping` of nodes (`id`, `message` or null, `parent`, `children`)
and `current_node`, the leaf of the branch the person last saw. That branch, read from its
root, is the chat; every other branch is kept as turns it replaced (superseded). A message
has `author.role` (user, assistant, system, tool), `content` (`content_type` with `parts` or
`text`), `create_time` (may be null), `recipient` and `metadata`. What is taken as history:

- user and assistant text (`text`, `multimodal_text`; images and uploaded files by their
  `file-…` id, from the zip or the folder beside the file, else named as missing);
- a code cell sent to the code interpreter as a fenced block, and its `execution_output` as
  a model message (plain text: Gemini never sees another assistant's tool calls);
- skipped: system messages, messages hidden from the conversation (custom instructions,
  the model's context), reasoning summaries, commands to other tools, empty and deleted
  (null) nodes.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from koroku_desktop.domain.events import Role
from koroku_desktop.maintenance.foreign_files import ExportFiles, chats_of, mime_of, text_of, when
from koroku_desktop.maintenance.foreign_import import (
    ForeignChat,
    ForeignFile,
    ForeignFormatError,
    ForeignMessage,
)

_SKIPPED_CONTENT = frozenset(
    {
        "thoughts",
        "reasoning_recap",
        "user_editable_context",
        "model_editable_context",
        "app_pairing_content",
    }
)
_POINTER_SCHEMES = ("file-service://", "sediment://")


def read_chatgpt(path: Path, files: ExportFiles | None = None) -> Iterator[ForeignChat]:
    """Every conversation of the export at `path`, in file order, read incrementally.
    Raises `ForeignFormatError` for a damaged file or a conversation without a mapping."""
    for n, raw in chats_of(path):
        yield chatgpt_chat(raw, n, files)


def chatgpt_chat(raw: dict[str, Any], n: int, files: ExportFiles | None = None) -> ForeignChat:
    """One conversation object as a `ForeignChat` (see the module for what is kept)."""
    mapping = raw.get("mapping")
    export_id = text_of(raw.get("conversation_id") or raw.get("id"))
    if not isinstance(mapping, dict) or not export_id:
        raise ForeignFormatError(f"conversation {n} has no id or no message mapping")
    nodes = {_key(k): v for k, v in mapping.items() if isinstance(v, dict)}
    chat = ForeignChat(
        "chatgpt", export_id, text_of(raw.get("title")), when(raw.get("create_time"))
    )
    main = _main_path(nodes, raw.get("current_node"))
    on_main = set(main)
    for i, node_id in enumerate(main):
        _add(chat, nodes.get(node_id), node_id, files, replaced_by=None)
        following = main[i + 1] if i + 1 < len(main) else None
        for child in _children(nodes.get(node_id)):  # the branches the next one replaced
            if child != following and child not in on_main:
                for off in _subtree(nodes, child, on_main):
                    _add(chat, nodes[off], off, files, replaced_by=following or node_id)
    return chat


def _children(node: Any) -> list[str]:
    children = node.get("children") if isinstance(node, dict) else None
    return [_key(c) for c in children] if isinstance(children, list) else []


def _key(value: Any) -> str:
    """A node id as text (an id that is not text, or not valid Unicode, made so)."""
    return text_of(value if isinstance(value, str) else str(value))


def _main_path(nodes: dict[str, dict[str, Any]], current: Any) -> list[str]:
    """Root to `current_node` (or, without one, along each node's last child)."""
    path: list[str] = []
    seen: set[str] = set()
    node_id = _key(current) if current is not None else None
    if node_id in nodes:
        while node_id is not None and node_id in nodes and node_id not in seen:
            seen.add(node_id)
            path.append(node_id)
            parent = nodes[node_id].get("parent")
            node_id = _key(parent) if parent is not None else None
        return path[::-1]
    roots = [
        k for k, v in nodes.items() if v.get("parent") is None or _key(v["parent"]) not in nodes
    ]
    node_id = roots[0] if roots else None
    while node_id is not None and node_id not in seen:
        seen.add(node_id)
        path.append(node_id)
        children = [c for c in _children(nodes[node_id]) if c in nodes]
        node_id = children[-1] if children else None
    return path


def _subtree(nodes: dict[str, dict[str, Any]], top: str, on_main: set[str]) -> list[str]:
    """`top` and everything under it, depth first in the export's child order."""
    out: list[str] = []
    stack = [top]
    seen = set(on_main)
    while stack:
        node_id = stack.pop()
        if node_id in seen or node_id not in nodes:
            continue
        seen.add(node_id)
        out.append(node_id)
        stack.extend(reversed(_children(nodes[node_id])))
    return out


def _add(
    chat: ForeignChat, node: Any, node_id: str, files: ExportFiles | None, replaced_by: str | None
) -> None:
    message = node.get("message") if isinstance(node, dict) else None
    if not isinstance(message, dict):
        return  # the root, or a deleted node
    converted = _message(message, node_id, files, replaced_by)
    if converted is not None:
        chat.messages.append(converted)


def _message(
    message: dict[str, Any], node_id: str, files: ExportFiles | None, replaced_by: str | None
) -> ForeignMessage | None:
    author, content, metadata = (_object(message.get(k)) for k in ("author", "content", "metadata"))
    role_name = author.get("role")
    kind = text_of(content.get("content_type"))
    if metadata.get("is_visually_hidden_from_conversation") or kind in _SKIPPED_CONTENT:
        return None
    role: Role
    if role_name == "user":
        role = "user"
    elif role_name in ("assistant", "tool"):
        role = "model"
    else:
        return None  # system messages (hidden instructions), unknown authors
    recipient = message.get("recipient")
    if role_name == "assistant" and recipient not in (None, "all") and kind != "code":
        return None  # a command to one of ChatGPT's tools
    text, pointers = _content(content)
    if role_name == "tool":
        text = _tool_text(author, kind, text)
    found = _files(pointers, metadata, files)
    if not text.strip() and not found:
        return None
    return ForeignMessage(
        export_id=node_id,
        role=role,
        text=text,
        created_at=when(message.get("create_time")),
        files=tuple(found),
        replaced_by=replaced_by,
    )


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _content(content: dict[str, Any]) -> tuple[str, list[str]]:
    """The text of a content, and the file ids of the images it points at."""
    kind = content.get("content_type")
    if kind == "code":
        language = text_of(content.get("language"))
        language = "" if language in ("unknown", "") else language
        return f"```{language}\n{text_of(content.get('text'))}\n```", []
    if kind == "execution_output":
        return text_of(content.get("text")), []
    texts: list[str] = []
    pointers: list[str] = []
    if isinstance(content.get("text"), str):
        texts.append(text_of(content["text"]))
    parts = content.get("parts")
    for part in parts if isinstance(parts, list) else []:
        if isinstance(part, str):
            texts.append(text_of(part))
        elif isinstance(part, dict):
            pointer = text_of(part.get("asset_pointer"))
            for scheme in _POINTER_SCHEMES:
                if pointer.startswith(scheme):
                    pointers.append(pointer[len(scheme) :])
            if isinstance(part.get("text"), str):
                texts.append(text_of(part["text"]))
    if kind == "tether_quote" and content.get("title"):
        texts.insert(0, text_of(content.get("title")))
    if isinstance(content.get("result"), str):
        texts.append(text_of(content["result"]))
    return "\n".join(t for t in texts if t.strip()), pointers


def _tool_text(author: dict[str, Any], kind: Any, text: str) -> str:
    if not text.strip():
        return ""
    name = text_of(author.get("name")) or "tool"
    if kind == "execution_output":
        return f"Output ({name}):\n```\n{text}\n```"
    return f"[{name}]\n{text}"


def _files(
    pointers: list[str], metadata: dict[str, Any], files: ExportFiles | None
) -> list[ForeignFile]:
    """The files a message carries: its images, then its uploaded attachments, once each."""
    wanted: dict[str, tuple[str, object]] = {p: ("", None) for p in pointers}
    attachments = metadata.get("attachments")
    for item in attachments if isinstance(attachments, list) else []:
        if isinstance(item, dict) and isinstance(item.get("id"), str):
            mime = item.get("mime_type") or item.get("mimeType")
            wanted[item["id"]] = (text_of(item.get("name")), mime)
    out: list[ForeignFile] = []
    for file_id, (name, mime) in wanted.items():
        held = files.find(file_id) if files is not None else None
        if held is None:
            shown = name or file_id
            out.append(ForeignFile(shown, mime_of(shown, mime)))
        else:
            out.append(ForeignFile(name or held[0], mime_of(name or held[0], mime), held[1]))
    return out
