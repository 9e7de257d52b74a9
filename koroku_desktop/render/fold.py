"""The fold: parts, events and log entries -> blocks. With render/markers.py (every event
that is not a message, as one `Marker`), the only switch over domain kinds.

Each `match` ends in `assert_never`: a part kind added to the domain is a type error here
until it has a block; a new event kind is a case in render/markers.py and nothing else.
"""

from __future__ import annotations

import base64
import binascii
from typing import assert_never

from koroku_desktop.domain import parts as p
from koroku_desktop.domain.events import DamagedEvent, Event, LogEntry, MessageEvent, StoredEvent
from koroku_desktop.domain.model_io import finish_notice
from koroku_desktop.domain.remembered import parse_remembered
from koroku_desktop.domain.turn_time import without_time_note
from koroku_desktop.render.blocks import (
    AttachmentBlock,
    Block,
    CodeBlock,
    EntryView,
    NoticeBlock,
    RememberedBlock,
    Speaker,
    TextBlock,
    ThoughtBlock,
    ToolCallBlock,
    ToolResultBlock,
    UnknownBlock,
)
from koroku_desktop.render.citations import grounded_blocks
from koroku_desktop.render.markers import damaged_marker, event_marker


def tool_result(part: p.FunctionResponsePart) -> ToolResultBlock:
    """A function response as a block; `failed` is `FunctionResponsePart.failed`, the one rule."""
    return ToolResultBlock(part.name, part.response, part.failed, part.id, part.call_args)


def _decoded_size(data: str) -> int:
    try:
        return len(base64.b64decode(data, validate=False))
    except (binascii.Error, ValueError):
        return len(data) * 3 // 4


def part_block(part: p.Part) -> Block | None:
    """One part as a block (None for an empty text part, which shows nothing)."""
    match part:
        case p.TextPart(text=text, thought=thought):
            if part.is_empty():
                return None
            return ThoughtBlock(text) if thought else TextBlock(text)
        case p.FunctionCallPart():
            return ToolCallBlock(name=part.name, args=part.args, call_id=part.id)
        case p.FunctionResponsePart():
            return tool_result(part)
        case p.ExecutableCodePart():
            return CodeBlock(part.code, language=(part.language or "").lower())
        case p.CodeExecutionResultPart():
            return CodeBlock(part.output or "", output=True, outcome=part.outcome)
        case p.InlineDataPart():
            return AttachmentBlock(part.mime_type, size=_decoded_size(part.data))
        case p.FileDataPart():
            return AttachmentBlock(part.mime_type, uri=part.file_uri)
        case p.AttachmentPart():
            return AttachmentBlock(
                part.mime_type,
                size=part.size,
                name=part.name,
                sha256=part.sha256,
                server=part.server,
            )
        case p.UnknownPart():
            return UnknownBlock(part.raw)
        case _:
            assert_never(part)


def part_blocks(parts: list[p.Part]) -> tuple[Block, ...]:
    """The blocks of a list of parts, in order, empty text left out."""
    blocks = []
    for part in parts:
        block = part_block(part)
        if block is not None:
            blocks.append(block)
    return tuple(blocks)


def _from_person(message: MessageEvent) -> bool:
    return message.role == "user" and message.origin == "person"


def said_parts(message: MessageEvent) -> list[p.Part]:
    """The parts of a message that were said in it: in a person's turn, neither the time
    note (for the model) nor the past passages surfaced with it (said where they came from).
    What search and embeddings take of a message."""
    if not _from_person(message):
        return list(message.parts)
    return [x for x in without_time_note(message.parts) if parse_remembered(x) is None]


def _content_blocks(message: MessageEvent) -> tuple[Block, ...]:
    """The blocks of a message's parts. In a person's turn the time note (for the model) is
    not shown, and surfaced past passages are a `RememberedBlock`."""
    if not _from_person(message):
        return part_blocks(message.parts)
    blocks: list[Block] = []
    for part in without_time_note(message.parts):
        passages = parse_remembered(part)
        if passages is not None:
            blocks.append(RememberedBlock(tuple(passages)))
        elif (block := part_block(part)) is not None:
            blocks.append(block)
    return tuple(blocks)


def message_blocks(event: MessageEvent) -> tuple[Block, ...]:
    """A message's parts as blocks, then a notice when the answer ended early (cut off...)."""
    blocks = _content_blocks(event)
    if event.grounding is not None:
        blocks = grounded_blocks(blocks, event.grounding)
    notice = finish_notice(event.finish_reason)
    return blocks if notice is None else (*blocks, NoticeBlock(notice))


def event_blocks(event: Event) -> tuple[Block, ...]:
    """The blocks of one event: a message's blocks, or the marker a boundary event is."""
    if isinstance(event, MessageEvent):
        return message_blocks(event)
    marker = event_marker(event)
    return () if marker is None else (marker,)


def speaker(event: Event) -> Speaker:
    """Who an event is from (`marker` for compactions and clears)."""
    if not isinstance(event, MessageEvent):
        return "marker"
    if event.role == "model":
        return "model"
    if event.origin == "repair":
        return "repair"
    return "user" if event.is_user_turn else "tools"


def entry_view(entry: LogEntry) -> EntryView:
    """One log entry as blocks (a damaged row is a marker block of its own)."""
    match entry:
        case DamagedEvent():
            damaged = damaged_marker(entry)
            return EntryView(entry.seq, entry.created_at, "marker", (damaged,), damaged)
        case StoredEvent(event=MessageEvent() as message):
            blocks = message_blocks(message)
            return EntryView(entry.seq, entry.created_at, speaker(message), blocks)
        case StoredEvent(event=event):
            marker = event_marker(event)
            markers = () if marker is None else (marker,)
            return EntryView(entry.seq, entry.created_at, "marker", markers, marker)
        case _:
            assert_never(entry)
