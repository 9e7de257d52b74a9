"""Attachments typed in the terminal: `/attach` in the chat, `-a` on `ask`."""

from __future__ import annotations

import asyncio
import shlex
from pathlib import Path

from koroku_desktop.app.runtime import AttachmentRefused, Runtime, read_attachment_file
from koroku_desktop.domain.attachment import PendingAttachment, human_size, kind_label
from koroku_desktop.domain.parts import AttachmentPart


async def keep_attachments(
    runtime: Runtime, pending: list[PendingAttachment]
) -> list[AttachmentPart]:
    """Store checked files in the blob store (off the loop); the parts a turn carries."""
    store = runtime.attachments
    if store is None or not pending:
        return []
    return await asyncio.to_thread(lambda: [store.keep(p) for p in pending])


def describe_attachment(pending: PendingAttachment) -> str:
    """`report.pdf (PDF, 120.4 KB)`: a pending attachment as the terminal names it."""
    return f"{pending.name} ({kind_label(pending.mime_type)}, {human_size(pending.size)})"


def attach_command(line: str, pending: list[PendingAttachment]) -> str:
    """`/attach PATH` adds a checked file to the next message, `/attach` lists them and
    `/attach clear` drops them; returns what to print."""
    arg = line.removeprefix("/attach").strip()
    if arg == "clear":
        pending.clear()
        return "(no attachments for the next message)"
    if arg:
        try:
            words = shlex.split(arg)
        except ValueError:
            words = [arg]
        path = Path(words[0] if len(words) == 1 else arg).expanduser()
        try:
            pending.append(read_attachment_file(path))
        except AttachmentRefused as exc:
            return f"✗ not attached: {exc}"
    if not pending:
        return "(nothing attached; `/attach PATH` attaches a file to your next message)"
    names = ", ".join(describe_attachment(p) for p in pending)
    return f"(attached to your next message: {names})"
